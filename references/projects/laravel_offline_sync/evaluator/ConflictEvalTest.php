<?php

namespace Tests\Eval;

use App\Models\Note;

class ConflictEvalTest extends SyncTestCase
{
    public function test_stale_update_is_a_conflict_and_keeps_newer_state(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'v1')])->assertOk();
        $this->sync('phone', [$this->updateOp('m2', 'n1', 1, ['title' => 'v2'])])->assertOk();
        $r = $this->sync('laptop', [$this->updateOp('l1', 'n1', 1, ['title' => 'stale'])])->assertOk();
        $this->assertSame('conflict', $r->json('results.0.status'));
        $this->assertSame(['v2', 2], [$this->live('n1')->title, (int) $this->live('n1')->version]);
        $this->assertCount(2, $this->changesFor('n1'));
    }

    public function test_conflict_result_carries_server_state(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'v1')])->assertOk();
        $this->sync('phone', [$this->updateOp('m2', 'n1', 1, ['title' => 'v2'])])->assertOk();
        $r = $this->sync('laptop', [$this->updateOp('l1', 'n1', 1, ['title' => 'stale'])])->assertOk();
        $this->assertSame('conflict', $r->json('results.0.status'));
        $this->assertSame('l1', $r->json('results.0.mutation_id'));
        $this->assertSame(2, $r->json('results.0.note.version'));
        $this->assertSame('v2', $r->json('results.0.note.title'));
    }

    public function test_stale_delete_is_a_conflict(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1'), $this->updateOp('m2', 'n1', 1, ['title' => 'v2'])])->assertOk();
        $r = $this->sync('laptop', [$this->deleteOp('l1', 'n1', 1)])->assertOk();
        $this->assertSame('conflict', $r->json('results.0.status'));
        $this->assertNotNull($this->live('n1'));
        $this->assertSame([], array_values(array_filter($this->changesFor('n1'), fn ($c) => $c['op'] === 'delete')));
    }

    public function test_update_without_base_version_is_rejected(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'v1')])->assertOk();
        $blind = ['mutation_id' => 'l1', 'op' => 'update', 'note_id' => 'n1', 'data' => ['title' => 'blind']];
        $r = $this->sync('laptop', [$blind])->assertOk();
        $this->assertContains($r->json('results.0.status'), ['rejected', 'conflict']);
        $this->assertSame('v1', $this->live('n1')->title);
    }

    public function test_create_over_existing_note_is_a_conflict(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'Original')])->assertOk();
        $r = $this->sync('laptop', [$this->createOp('l1', 'n1', 'Usurper')])->assertOk();
        $this->assertSame('conflict', $r->json('results.0.status'));
        $this->assertSame(['Original', 1], [$this->live('n1')->title, (int) $this->live('n1')->version]);
        $this->assertCount(1, $this->changesFor('n1'));
    }

    public function test_update_of_unknown_note_is_rejected(): void
    {
        $r = $this->sync('phone', [$this->updateOp('m1', 'ghost', 1, ['title' => 'x'])])->assertOk();
        $this->assertContains($r->json('results.0.status'), ['rejected', 'conflict']);
        $this->assertSame(0, Note::whereKey('ghost')->count());
        $this->assertSame([], $this->pullAll());
    }

    public function test_two_devices_editing_the_same_version(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'v1', 'body')])->assertOk();
        $a = $this->sync('phone', [$this->updateOp('m2', 'n1', 1, ['body' => 'phone edit'])])->assertOk();
        $b = $this->sync('laptop', [$this->updateOp('l1', 'n1', 1, ['body' => 'laptop edit'])])->assertOk();
        $this->assertSame('applied', $a->json('results.0.status'));
        $this->assertSame('conflict', $b->json('results.0.status'));
        $this->assertSame('phone edit', $this->live('n1')->body);
    }
}
