<?php

namespace Tests\Eval;

use App\Models\Note;
use Illuminate\Contracts\Console\Kernel as ConsoleKernel;
use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Contracts\Http\Kernel as HttpKernel;
use Illuminate\Foundation\Application;
use Illuminate\Foundation\Testing\RefreshDatabase;
use Illuminate\Foundation\Testing\TestCase;
use Illuminate\Testing\TestResponse;

/**
 * Base of the evaluator's tests: boots the workspace's application on its own
 * (not through its tests/ or bootstrap/), a fresh in-memory database per test.
 */
abstract class SyncTestCase extends TestCase
{
    use RefreshDatabase;

    public $mockConsoleOutput = false;

    /** The application as the template's bootstrap/app.php builds it, built here. */
    public function createApplication()
    {
        $app = new Application(dirname(__DIR__, 2));
        $app->singleton(HttpKernel::class, \App\Http\Kernel::class);
        $app->singleton(ConsoleKernel::class, \App\Console\Kernel::class);
        $app->singleton(ExceptionHandler::class, \App\Exceptions\Handler::class);
        $app->make(ConsoleKernel::class)->bootstrap();

        return $app;
    }

    protected function sync(string $device, array $mutations = [], ?int $cursor = 0): TestResponse
    {
        return $this->postJson('/api/sync', ['device_id' => $device, 'cursor' => $cursor, 'mutations' => $mutations]);
    }

    protected function raw(string $body): TestResponse
    {
        return $this->call('POST', '/api/sync', [], [], [], [
            'CONTENT_TYPE' => 'application/json',
            'HTTP_ACCEPT' => 'application/json',
        ], $body);
    }

    protected function createOp(string $mid, string $note, string $title = 'Title', string $body = 'Body'): array
    {
        return ['mutation_id' => $mid, 'op' => 'create', 'note_id' => $note, 'data' => ['title' => $title, 'body' => $body]];
    }

    protected function updateOp(string $mid, string $note, int $base, array $data): array
    {
        return ['mutation_id' => $mid, 'op' => 'update', 'note_id' => $note, 'base_version' => $base, 'data' => $data];
    }

    protected function deleteOp(string $mid, string $note, int $base): array
    {
        return ['mutation_id' => $mid, 'op' => 'delete', 'note_id' => $note, 'base_version' => $base];
    }

    /** The whole feed seen by a fresh device, following next_cursor page by page. */
    protected function pullAll(string $device = 'observer'): array
    {
        $cursor = 0;
        $all = [];
        for ($i = 0; $i < 100; $i++) {
            $json = $this->sync($device, [], $cursor)->assertOk()->json();
            $all = array_merge($all, $json['changes']);
            if ($json['changes'] === [] || $json['next_cursor'] === $cursor) {
                break;
            }
            $cursor = $json['next_cursor'];
        }

        return $all;
    }

    /** Changes for one note in the feed. */
    protected function changesFor(string $note, string $device = 'observer'): array
    {
        return array_values(array_filter($this->pullAll($device), fn ($c) => ($c['note_id'] ?? null) === $note));
    }

    protected function live(string $note): ?Note
    {
        $found = Note::whereKey($note)->first();

        return $found !== null && $found->deleted_at === null ? $found : null;
    }

    protected function assertStatus(array $result, array $allowed): void
    {
        $this->assertContains($result['status'] ?? null, $allowed, 'result: '.json_encode($result));
    }
}
