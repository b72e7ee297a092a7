<?php

namespace Tests\Eval;

class CursorEvalTest extends SyncTestCase
{
    private function seedNotes(int $notes): void
    {
        $batch = [];
        for ($i = 1; $i <= $notes; $i++) {
            $batch[] = $this->createOp("m$i", "n$i", "Note $i");
        }
        $this->sync('phone', $batch)->assertOk();
    }

    public function test_pull_returns_only_changes_after_cursor(): void
    {
        $this->seedNotes(3);
        $cursor = $this->sync('laptop', [], 0)->assertOk()->json('next_cursor');
        $this->sync('phone', [$this->createOp('m4', 'n4'), $this->createOp('m5', 'n5')])->assertOk();
        $r = $this->sync('laptop', [], $cursor)->assertOk();
        $this->assertSame(['n4', 'n5'], array_column($r->json('changes'), 'note_id'));
        foreach ($r->json('changes') as $change) {
            $this->assertGreaterThan($cursor, $change['seq']);
        }
    }

    public function test_next_cursor_is_the_last_delivered_change(): void
    {
        $this->seedNotes(4);
        $r = $this->sync('laptop', [], 0)->assertOk();
        $this->assertSame(array_slice($r->json('changes'), -1)[0]['seq'], $r->json('next_cursor'));
        $head = $r->json('next_cursor');
        $again = $this->sync('laptop', [], $head)->assertOk();
        $this->assertSame([], $again->json('changes'));
        $this->assertSame($head, $again->json('next_cursor'));
        $fresh = $this->sync('tablet', [], null)->assertOk();
        $this->assertCount(4, $fresh->json('changes'));
    }

    public function test_feed_pages_are_capped_and_complete(): void
    {
        $this->seedNotes(600);
        $first = $this->sync('laptop', [], 0)->assertOk();
        $this->assertCount(500, $first->json('changes'));
        $this->assertTrue($first->json('has_more'));
        $second = $this->sync('laptop', [], $first->json('next_cursor'))->assertOk();
        $this->assertCount(100, $second->json('changes'));
        $this->assertFalse($second->json('has_more'));
        $ids = array_merge(array_column($first->json('changes'), 'note_id'), array_column($second->json('changes'), 'note_id'));
        $this->assertCount(600, array_unique($ids));
    }

    public function test_changes_are_in_sequence_order(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'a'), $this->createOp('m2', 'b')])->assertOk();
        $this->sync('laptop', [$this->updateOp('l1', 'b', 1, ['title' => 'B']), $this->updateOp('l2', 'a', 1, ['title' => 'A'])])->assertOk();
        $this->sync('phone', [$this->deleteOp('m3', 'b', 2)])->assertOk();
        $feed = $this->pullAll();
        $this->assertSame(
            [['a', 'create'], ['b', 'create'], ['b', 'update'], ['a', 'update'], ['b', 'delete']],
            array_map(fn ($c) => [$c['note_id'], $c['op']], $feed)
        );
        $seqs = array_column($feed, 'seq');
        $sorted = $seqs;
        sort($sorted);
        $this->assertSame($sorted, $seqs);
        $this->assertCount(5, array_unique($seqs));
    }

    public function test_only_applied_mutations_produce_changes(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1')])->assertOk();
        $this->sync('laptop', [
            $this->updateOp('l1', 'n1', 7, ['title' => 'stale']),
            ['mutation_id' => 'l2', 'op' => 'rename', 'note_id' => 'n1'],
            $this->createOp('l3', 'n1', 'dup'),
        ])->assertOk();
        $this->sync('phone', [$this->createOp('m1', 'n1')])->assertOk();
        $this->assertCount(1, $this->pullAll());
    }

    public function test_invalid_cursor_is_rejected_cleanly(): void
    {
        $this->seedNotes(1);
        foreach (['abc', -1, 1.5, ['x' => 1]] as $cursor) {
            $r = $this->postJson('/api/sync', ['device_id' => 'laptop', 'cursor' => $cursor, 'mutations' => []]);
            $this->assertContains($r->status(), [400, 422], 'cursor '.json_encode($cursor));
            $this->assertIsArray($r->json());
        }
    }
}
