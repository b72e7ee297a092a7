<?php

namespace Tests\Eval;

use App\Models\Note;

class IdempotencyEvalTest extends SyncTestCase
{
    public function test_retried_create_is_applied_once(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1')])->assertOk();
        $r = $this->sync('phone', [$this->createOp('m1', 'n1')])->assertOk();
        $this->assertStatus($r->json('results.0'), ['applied', 'duplicate']);
        $this->assertSame(1, Note::whereKey('n1')->count());
        $this->assertCount(1, $this->changesFor('n1'));
    }

    public function test_retried_update_is_applied_once(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1')])->assertOk();
        $update = $this->updateOp('m2', 'n1', 1, ['title' => 'Edited']);
        $this->sync('phone', [$update])->assertOk();
        $r = $this->sync('phone', [$update])->assertOk();
        $this->assertStatus($r->json('results.0'), ['applied', 'duplicate']);
        $this->assertSame(2, (int) $this->live('n1')->version);
        $this->assertCount(2, $this->changesFor('n1'));
    }

    public function test_retried_delete_is_not_a_conflict(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1')])->assertOk();
        $this->sync('phone', [$this->deleteOp('m2', 'n1', 1)])->assertOk();
        $r = $this->sync('phone', [$this->deleteOp('m2', 'n1', 1)])->assertOk();
        $this->assertStatus($r->json('results.0'), ['applied', 'duplicate']);
        $this->assertCount(1, array_filter($this->changesFor('n1'), fn ($c) => $c['op'] === 'delete'));
    }

    public function test_duplicate_mutation_within_one_batch_is_applied_once(): void
    {
        $r = $this->sync('phone', [$this->createOp('m1', 'n1'), $this->createOp('m1', 'n1')])->assertOk();
        $this->assertCount(2, $r->json('results'));
        $this->assertSame('applied', $r->json('results.0.status'));
        $this->assertStatus($r->json('results.1'), ['applied', 'duplicate']);
        $this->assertCount(1, $this->changesFor('n1'));
    }

    public function test_resent_batch_changes_nothing(): void
    {
        $batch = [$this->createOp('m1', 'n1'), $this->updateOp('m2', 'n1', 1, ['body' => 'b2']), $this->createOp('m3', 'n2')];
        $this->sync('phone', $batch)->assertOk();
        $before = $this->pullAll();
        $r = $this->sync('phone', $batch)->assertOk();
        foreach ($r->json('results') as $result) {
            $this->assertStatus($result, ['applied', 'duplicate']);
        }
        $this->assertSame(count($before), count($this->pullAll()));
        $this->assertSame(2, (int) $this->live('n1')->version);
    }

    public function test_mutation_ids_are_scoped_per_device(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'From phone')])->assertOk();
        $r = $this->sync('laptop', [$this->createOp('m1', 'n2', 'From laptop')])->assertOk();
        $this->assertSame('applied', $r->json('results.0.status'));
        $this->assertSame('From laptop', $this->live('n2')?->title);
    }

    public function test_reused_mutation_id_with_different_content_is_rejected(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'First')])->assertOk();
        $r = $this->sync('phone', [$this->updateOp('m1', 'n1', 1, ['title' => 'Other'])])->assertOk();
        $this->assertSame('rejected', $r->json('results.0.status'));
        $this->assertSame('First', $this->live('n1')->title);
        $this->assertCount(1, $this->changesFor('n1'));
    }

    public function test_retry_after_other_devices_edits_is_still_a_duplicate(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'Mine')])->assertOk();
        $this->sync('laptop', [$this->updateOp('l1', 'n1', 1, ['title' => 'Laptop'])])->assertOk();
        $r = $this->sync('phone', [$this->createOp('m1', 'n1', 'Mine')])->assertOk();
        $this->assertStatus($r->json('results.0'), ['applied', 'duplicate']);
        $this->assertSame(['Laptop', 2], [$this->live('n1')->title, (int) $this->live('n1')->version]);
        $this->assertCount(2, $this->changesFor('n1'));
    }
}
