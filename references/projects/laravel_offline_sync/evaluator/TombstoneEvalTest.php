<?php

namespace Tests\Eval;

class TombstoneEvalTest extends SyncTestCase
{
    public function test_delete_publishes_a_tombstone(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1')])->assertOk();
        $seen = $this->sync('laptop', [], 0)->assertOk()->json('next_cursor');
        $this->sync('phone', [$this->deleteOp('m2', 'n1', 1)])->assertOk();
        $late = $this->sync('laptop', [], $seen)->assertOk();
        $this->assertCount(1, $late->json('changes'));
        $this->assertSame('delete', $late->json('changes.0.op'));
        $this->assertSame('n1', $late->json('changes.0.note_id'));
        $this->assertSame(2, $late->json('changes.0.version'));
        $this->assertTrue($late->json('changes.0.note.deleted'));
    }

    public function test_update_after_delete_is_a_conflict(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1'), $this->deleteOp('m2', 'n1', 1)])->assertOk();
        $r = $this->sync('laptop', [$this->updateOp('l1', 'n1', 2, ['title' => 'zombie'])])->assertOk();
        $this->assertSame('conflict', $r->json('results.0.status'));
        $this->assertNull($this->live('n1'));
        $this->assertSame('delete', array_slice($this->changesFor('n1'), -1)[0]['op']);
    }

    public function test_create_over_tombstone_is_a_conflict(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1'), $this->deleteOp('m2', 'n1', 1)])->assertOk();
        $r = $this->sync('laptop', [$this->createOp('l1', 'n1', 'Again')])->assertOk();
        $this->assertSame('conflict', $r->json('results.0.status'));
        $this->assertNull($this->live('n1'));
        $this->assertCount(2, $this->changesFor('n1'));
    }
}
