<?php

namespace App\Services;

use App\Models\Note;
use App\Models\SyncChange;

/**
 * First pass: applies every mutation as it comes and returns the change feed.
 */
class SyncService
{
    public function sync(array $input): array
    {
        $device = $input['device_id'];
        $results = [];

        foreach ($input['mutations'] ?? [] as $m) {
            $note = Note::find($m['note_id']);
            if ($m['op'] === 'create') {
                $note = Note::create([
                    'id' => $m['note_id'],
                    'title' => $m['data']['title'],
                    'body' => $m['data']['body'] ?? '',
                    'version' => 1,
                ]);
            } elseif ($m['op'] === 'update') {
                $note->title = $m['data']['title'] ?? null;
                $note->body = $m['data']['body'] ?? '';
                $note->version = $note->version + 1;
                $note->save();
            } elseif ($m['op'] === 'delete') {
                $note->delete();
                $note->version = $note->version + 1;
            }

            SyncChange::create([
                'note_id' => $m['note_id'],
                'device_id' => $device,
                'mutation_id' => $m['mutation_id'],
                'op' => $m['op'],
                'version' => $note->version,
                'payload' => $note->toSyncArray(),
            ]);

            $results[] = [
                'mutation_id' => $m['mutation_id'],
                'status' => 'applied',
                'note_id' => $m['note_id'],
                'version' => $note->version,
            ];
        }

        $changes = SyncChange::where('id', '>', $input['cursor'] ?? 0)->orderBy('id')->get();

        return [
            'results' => $results,
            'changes' => $changes->map->toSyncArray()->values()->all(),
            'next_cursor' => (int) SyncChange::max('id'),
        ];
    }
}
