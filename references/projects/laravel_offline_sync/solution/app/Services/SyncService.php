<?php

namespace App\Services;

use App\Models\Note;
use App\Models\SyncChange;
use App\Models\SyncMutation;
use Illuminate\Support\Facades\DB;
use Throwable;

/**
 * Server-authoritative sync: each mutation is validated, deduplicated per device,
 * checked against the note's version and applied atomically with its change-log
 * entry; the feed after the cursor is returned in sequence order, a page at a time.
 */
class SyncService
{
    public const PAGE_SIZE = 500;

    public const MAX_MUTATIONS = 1000;

    private const OPS = ['create', 'update', 'delete'];

    /** @return array{int, string, string}|null */
    public function validateRequest(array $input): ?array
    {
        $device = $input['device_id'] ?? null;
        if (! is_string($device) || trim($device) === '' || strlen($device) > 100) {
            return [422, 'invalid_device_id', 'device_id must be a non-empty string of at most 100 characters.'];
        }
        $cursor = $input['cursor'] ?? null;
        if ($cursor !== null && (! is_int($cursor) || $cursor < 0)) {
            return [422, 'invalid_cursor', 'cursor must be null or a non-negative integer.'];
        }
        $mutations = $input['mutations'] ?? [];
        if (! is_array($mutations) || ! array_is_list($mutations)) {
            return [422, 'invalid_mutations', 'mutations must be an array.'];
        }
        if (count($mutations) > self::MAX_MUTATIONS) {
            return [413, 'batch_too_large', 'At most '.self::MAX_MUTATIONS.' mutations per request.'];
        }

        return null;
    }

    public function sync(array $input): array
    {
        $device = $input['device_id'];
        $results = [];
        foreach ($input['mutations'] ?? [] as $index => $mutation) {
            $results[] = ['index' => $index] + $this->handle($device, $mutation);
        }

        $cursor = $input['cursor'] ?? 0;
        $page = SyncChange::where('id', '>', $cursor)->orderBy('id')->limit(self::PAGE_SIZE + 1)->get();
        $hasMore = $page->count() > self::PAGE_SIZE;
        $page = $page->take(self::PAGE_SIZE);

        return [
            'results' => $results,
            'changes' => $page->map->toSyncArray()->values()->all(),
            'next_cursor' => $page->isEmpty() ? $cursor : $page->last()->id,
            'has_more' => $hasMore,
        ];
    }

    private function handle(string $device, mixed $mutation): array
    {
        $id = is_array($mutation) ? ($mutation['mutation_id'] ?? null) : null;
        $id = is_string($id) && $id !== '' && strlen($id) <= 100 ? $id : null;
        $problem = $this->invalid($mutation);
        if ($id === null || $problem !== null) {
            return $this->rejected($id, $mutation, 'invalid_mutation', $problem ?? 'mutation_id must be a non-empty string.');
        }
        $hash = $this->hash($mutation);
        $seen = SyncMutation::where('device_id', $device)->where('mutation_id', $id)->first();
        if ($seen !== null) {
            if ($seen->request_hash !== $hash) {
                return $this->rejected($id, $mutation, 'mutation_id_reused', 'This mutation_id was already used for a different mutation.');
            }

            return ['status' => 'duplicate', 'original_status' => $seen->status] + $seen->result;
        }

        try {
            return DB::transaction(function () use ($device, $id, $hash, $mutation) {
                $result = $this->apply($device, $id, $mutation);
                if ($result['status'] === 'rejected') {
                    return $result; // depends on state that may change: not remembered
                }
                SyncMutation::create([
                    'device_id' => $device,
                    'mutation_id' => $id,
                    'request_hash' => $hash,
                    'status' => $result['status'],
                    'result' => $result,
                ]);

                return $result;
            });
        } catch (Throwable $e) {
            report($e);

            return [
                'mutation_id' => $id,
                'status' => 'error',
                'note_id' => $mutation['note_id'],
                'error' => ['code' => 'storage_error', 'message' => 'The mutation could not be stored; retry it.'],
            ];
        }
    }

    private function apply(string $device, string $id, array $m): array
    {
        $note = Note::lockForUpdate()->find($m['note_id']);
        $data = $m['data'] ?? [];
        if ($m['op'] === 'create') {
            if ($note !== null) {
                return $this->conflict($id, $note, 'A note with this id already exists.');
            }
            $note = Note::create([
                'id' => $m['note_id'],
                'title' => trim($data['title']),
                'body' => $data['body'] ?? '',
                'version' => 1,
            ]);
        } else {
            if ($note === null) {
                return $this->rejected($id, $m, 'not_found', 'No note with this id exists.');
            }
            if ($note->deleted_at !== null) {
                return $this->conflict($id, $note, 'The note has been deleted.');
            }
            if ($note->version !== $m['base_version']) {
                return $this->conflict($id, $note, 'The note has changed since base_version.');
            }
            if ($m['op'] === 'update') {
                if (array_key_exists('title', $data)) {
                    $note->title = trim($data['title']);
                }
                if (array_key_exists('body', $data)) {
                    $note->body = $data['body'];
                }
            } else {
                $note->deleted_at = now();
            }
            $note->version = $note->version + 1;
            $note->save();
        }

        $change = SyncChange::create([
            'note_id' => $note->id,
            'device_id' => $device,
            'mutation_id' => $id,
            'op' => $m['op'],
            'version' => $note->version,
            'payload' => $note->toSyncArray(),
        ]);

        return [
            'mutation_id' => $id,
            'status' => 'applied',
            'note_id' => $note->id,
            'version' => $note->version,
            'seq' => $change->id,
        ];
    }

    /** Why a mutation is malformed, or null. */
    private function invalid(mixed $m): ?string
    {
        if (! is_array($m) || ($m !== [] && array_is_list($m)) || $m === []) {
            return 'A mutation must be an object.';
        }
        if (! in_array($m['op'] ?? null, self::OPS, true)) {
            return 'op must be one of create, update, delete.';
        }
        $noteId = $m['note_id'] ?? null;
        if (! is_string($noteId) || trim($noteId) === '' || strlen($noteId) > 64) {
            return 'note_id must be a non-empty string of at most 64 characters.';
        }
        if ($m['op'] !== 'create') {
            $base = $m['base_version'] ?? null;
            if (! is_int($base) || $base < 1) {
                return 'base_version must be a positive integer.';
            }
        }
        if ($m['op'] === 'delete') {
            return null;
        }
        $data = $m['data'] ?? null;
        if (! is_array($data) || ($data !== [] && array_is_list($data))) {
            return 'data must be an object.';
        }
        $unknown = array_diff(array_keys($data), ['title', 'body']);
        if ($unknown !== []) {
            return 'data has unknown field(s): '.implode(', ', $unknown).'.';
        }
        if ($m['op'] === 'create' && ! array_key_exists('title', $data)) {
            return 'data.title is required to create a note.';
        }
        if ($data === []) {
            return 'data must change at least one field.';
        }
        if (array_key_exists('title', $data) && (! is_string($data['title']) || trim($data['title']) === '' || mb_strlen($data['title']) > 200)) {
            return 'data.title must be a non-empty string of at most 200 characters.';
        }
        if (array_key_exists('body', $data) && (! is_string($data['body']) || mb_strlen($data['body']) > 100000)) {
            return 'data.body must be a string of at most 100000 characters.';
        }

        return null;
    }

    /** The mutation's content, independent of key order, to tell a retry from a reused id. */
    private function hash(array $m): string
    {
        $content = ['op' => $m['op'], 'note_id' => $m['note_id'], 'base_version' => $m['base_version'] ?? null, 'data' => $m['data'] ?? null];
        if (is_array($content['data'])) {
            ksort($content['data']);
        }

        return hash('sha256', json_encode($content));
    }

    private function conflict(string $id, Note $note, string $message): array
    {
        return [
            'mutation_id' => $id,
            'status' => 'conflict',
            'note_id' => $note->id,
            'version' => $note->version,
            'note' => $note->toSyncArray(),
            'error' => ['code' => 'conflict', 'message' => $message],
        ];
    }

    private function rejected(?string $id, mixed $m, string $code, string $message): array
    {
        $noteId = is_array($m) && is_string($m['note_id'] ?? null) ? $m['note_id'] : null;

        return [
            'mutation_id' => $id,
            'status' => 'rejected',
            'note_id' => $noteId,
            'error' => ['code' => $code, 'message' => $message],
        ];
    }
}
