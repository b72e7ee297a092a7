<?php

namespace Tests\Eval;

use App\Models\Note;
use Illuminate\Support\Facades\DB;

class TransactionEvalTest extends SyncTestCase
{
    /** The change log refuses writes for one note, as a full disk or lost connection would. */
    private function breakChangeLog(string $note): void
    {
        DB::unprepared("CREATE TRIGGER eval_broken_log BEFORE INSERT ON sync_changes WHEN NEW.note_id = '$note' BEGIN SELECT RAISE(ABORT, 'change log unavailable'); END");
    }

    private function repairChangeLog(): void
    {
        DB::unprepared('DROP TRIGGER eval_broken_log');
    }

    public function test_failed_change_log_write_on_create_leaves_no_note(): void
    {
        $this->breakChangeLog('doomed');
        $r = $this->sync('phone', [$this->createOp('m1', 'before'), $this->createOp('m2', 'doomed'), $this->createOp('m3', 'after')]);
        $r->assertOk();
        $this->assertSame(['m1', 'm2', 'm3'], array_column($r->json('results'), 'mutation_id'));
        $this->assertNotContains($r->json('results.1.status'), ['applied', 'duplicate']);
        $this->assertSame(0, Note::whereKey('doomed')->count());
        $this->assertNotNull($this->live('before'));
        $this->assertNotNull($this->live('after'));

        $this->repairChangeLog();
        $retry = $this->sync('phone', [$this->createOp('m2', 'doomed')])->assertOk();
        $this->assertSame('applied', $retry->json('results.0.status'));
        $this->assertCount(1, $this->changesFor('doomed'));
    }

    public function test_failed_change_log_write_on_update_keeps_previous_version(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'v1', 'body')])->assertOk();
        $this->breakChangeLog('n1');
        $r = $this->sync('phone', [$this->updateOp('m2', 'n1', 1, ['title' => 'v2'])]);
        $this->assertLessThan(600, $r->status());
        $note = $this->live('n1');
        $this->assertSame(['v1', 1], [$note->title, (int) $note->version]);

        $this->repairChangeLog();
        $retry = $this->sync('phone', [$this->updateOp('m2', 'n1', 1, ['title' => 'v2'])])->assertOk();
        $this->assertSame('applied', $retry->json('results.0.status'));
        $this->assertSame(['v2', 2], [$this->live('n1')->title, (int) $this->live('n1')->version]);
    }
}
