<?php

namespace Tests\Eval;

class FloorEvalTest extends SyncTestCase
{
    public function test_create_note(): void
    {
        $r = $this->sync('phone', [$this->createOp('m1', 'n1', 'Groceries', 'milk')])->assertOk();
        $this->assertSame('applied', $r->json('results.0.status'));
        $this->assertSame(1, $r->json('results.0.version'));
        $note = $this->live('n1');
        $this->assertNotNull($note);
        $this->assertSame(['Groceries', 'milk', 1], [$note->title, $note->body, (int) $note->version]);
        $changes = $this->changesFor('n1');
        $this->assertCount(1, $changes);
        $this->assertSame('create', $changes[0]['op']);
        $this->assertSame('Groceries', $changes[0]['note']['title']);
    }

    public function test_update_note(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'Groceries', 'milk')])->assertOk();
        $r = $this->sync('phone', [$this->updateOp('m2', 'n1', 1, ['title' => 'Shopping', 'body' => 'eggs'])])->assertOk();
        $this->assertSame('applied', $r->json('results.0.status'));
        $this->assertSame(2, $r->json('results.0.version'));
        $note = $this->live('n1');
        $this->assertSame(['Shopping', 'eggs', 2], [$note->title, $note->body, (int) $note->version]);
        $last = array_slice($this->changesFor('n1'), -1)[0];
        $this->assertSame(['update', 2, 'Shopping'], [$last['op'], $last['version'], $last['note']['title']]);
    }

    public function test_delete_note(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1')])->assertOk();
        $r = $this->sync('phone', [$this->deleteOp('m2', 'n1', 1)])->assertOk();
        $this->assertSame('applied', $r->json('results.0.status'));
        $this->assertNull($this->live('n1'));
        $last = array_slice($this->changesFor('n1'), -1)[0];
        $this->assertSame('delete', $last['op']);
    }
}
