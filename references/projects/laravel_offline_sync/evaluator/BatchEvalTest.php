<?php

namespace Tests\Eval;

use App\Models\Note;

class BatchEvalTest extends SyncTestCase
{
    public function test_mixed_batch_salvages_valid_mutations(): void
    {
        $this->sync('phone', [$this->createOp('m0', 'old'), $this->updateOp('m00', 'old', 1, ['title' => 'v2'])])->assertOk();
        $r = $this->sync('laptop', [
            $this->createOp('l1', 'a', 'A'),
            ['mutation_id' => 'l2', 'note_id' => 'b', 'data' => ['title' => 'no op']],
            $this->updateOp('l3', 'old', 1, ['title' => 'stale']),
            $this->createOp('l4', 'c', 'C'),
        ])->assertOk();
        $this->assertSame(['l1', 'l2', 'l3', 'l4'], array_column($r->json('results'), 'mutation_id'));
        $this->assertSame(['applied', 'rejected', 'conflict', 'applied'], array_column($r->json('results'), 'status'));
        $this->assertNotNull($this->live('a'));
        $this->assertNotNull($this->live('c'));
        $this->assertSame(0, Note::whereKey('b')->count());
        $this->assertSame('v2', $this->live('old')->title);
    }

    public function test_malformed_json_body(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1')])->assertOk();
        foreach (['{"device_id": "phone", "mutations": [', 'not json', '[1, 2, 3]', '"just a string"'] as $body) {
            $r = $this->raw($body);
            $this->assertContains($r->status(), [400, 422], "body $body");
            $this->assertIsArray($r->json(), "body $body");
        }
        $this->assertSame(1, Note::count());
    }

    public function test_missing_device_id(): void
    {
        foreach ([[], ['device_id' => ''], ['device_id' => 42], ['device_id' => ['a']]] as $extra) {
            $r = $this->postJson('/api/sync', $extra + ['cursor' => 0, 'mutations' => [$this->createOp('m1', 'n1')]]);
            $this->assertContains($r->status(), [400, 422], json_encode($extra));
            $this->assertIsArray($r->json());
        }
        $this->assertSame(0, Note::count());
    }

    public function test_mutations_must_be_an_array(): void
    {
        foreach (['create everything', 7, ['mutation_id' => 'm1', 'op' => 'create', 'note_id' => 'n1', 'data' => ['title' => 't']]] as $mutations) {
            $r = $this->postJson('/api/sync', ['device_id' => 'phone', 'cursor' => 0, 'mutations' => $mutations]);
            $this->assertContains($r->status(), [400, 422], json_encode($mutations));
            $this->assertIsArray($r->json());
        }
        $this->assertSame(0, Note::count());
    }

    public function test_malformed_mutation_entries_are_rejected_individually(): void
    {
        $bad = [
            'a string',
            null,
            42,
            ['op' => 'create', 'note_id' => 'x1', 'data' => ['title' => 'no id']],
            ['mutation_id' => 'b1', 'op' => 'explode', 'note_id' => 'x2'],
            ['mutation_id' => 'b2', 'op' => 'create', 'note_id' => '', 'data' => ['title' => 't']],
            ['mutation_id' => 'b3', 'op' => 'create', 'note_id' => ['x'], 'data' => ['title' => 't']],
            ['mutation_id' => 'b4', 'op' => 'create', 'note_id' => 'x3', 'data' => 'title=t'],
            ['mutation_id' => 'b5', 'op' => 'delete', 'note_id' => 'x4', 'base_version' => 'one'],
            ['mutation_id' => ['nested'], 'op' => 'create', 'note_id' => 'x5', 'data' => ['title' => 't']],
        ];
        $r = $this->sync('phone', [...$bad, $this->createOp('ok', 'good')])->assertOk();
        $statuses = array_column($r->json('results'), 'status');
        $this->assertSame([...array_fill(0, count($bad), 'rejected'), 'applied'], $statuses);
        $this->assertSame(['good'], Note::pluck('id')->all());
    }

    public function test_batch_is_applied_in_order(): void
    {
        $r = $this->sync('phone', [
            $this->updateOp('m0', 'n1', 1, ['title' => 'too early']),
            $this->createOp('m1', 'n1', 'v1'),
            $this->updateOp('m2', 'n1', 1, ['title' => 'v2']),
            $this->updateOp('m3', 'n1', 2, ['title' => 'v3']),
            $this->deleteOp('m4', 'n1', 3),
        ])->assertOk();
        $this->assertContains($r->json('results.0.status'), ['rejected', 'conflict']);
        $this->assertSame(['applied', 'applied', 'applied', 'applied'], array_column(array_slice($r->json('results'), 1), 'status'));
        $this->assertSame([1, 2, 3, 4], array_column(array_slice($r->json('results'), 1), 'version'));
        $this->assertSame(['create', 'update', 'update', 'delete'], array_column($this->changesFor('n1'), 'op'));
        $this->assertNull($this->live('n1'));
    }
}
