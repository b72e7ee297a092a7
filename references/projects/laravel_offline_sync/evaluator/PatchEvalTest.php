<?php

namespace Tests\Eval;

class PatchEvalTest extends SyncTestCase
{
    public function test_update_keeps_omitted_fields(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'Title', 'Long body')])->assertOk();
        $this->sync('phone', [$this->updateOp('m2', 'n1', 1, ['title' => 'New title'])])->assertOk();
        $this->assertSame(['New title', 'Long body'], [$this->live('n1')->title, $this->live('n1')->body]);
        $this->sync('laptop', [$this->updateOp('l1', 'n1', 2, ['body' => 'New body'])])->assertOk();
        $note = $this->live('n1');
        $this->assertSame(['New title', 'New body', 3], [$note->title, $note->body, (int) $note->version]);
        $last = array_slice($this->changesFor('n1'), -1)[0];
        $this->assertSame(['New title', 'New body'], [$last['note']['title'], $last['note']['body']]);
    }

    public function test_update_rejects_unknown_fields(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'Title')])->assertOk();
        $r = $this->sync('phone', [
            $this->updateOp('m2', 'n1', 1, ['title' => 'Hacked', 'version' => 99]),
            $this->updateOp('m3', 'n1', 1, ['colour' => 'red']),
        ])->assertOk();
        $this->assertSame(['rejected', 'rejected'], array_column($r->json('results'), 'status'));
        $this->assertSame(['Title', 1], [$this->live('n1')->title, (int) $this->live('n1')->version]);
    }

    public function test_update_rejects_invalid_values(): void
    {
        $this->sync('phone', [$this->createOp('m1', 'n1', 'Title', 'Body')])->assertOk();
        $r = $this->sync('phone', [
            $this->updateOp('m2', 'n1', 1, ['title' => '']),
            $this->updateOp('m3', 'n1', 1, ['title' => null]),
            $this->updateOp('m4', 'n1', 1, ['body' => ['nested']]),
            $this->updateOp('m5', 'n1', 1, ['title' => str_repeat('x', 201)]),
            $this->updateOp('m6', 'n1', 1, []),
        ])->assertOk();
        $this->assertSame(array_fill(0, 5, 'rejected'), array_column($r->json('results'), 'status'));
        $note = $this->live('n1');
        $this->assertSame(['Title', 'Body', 1], [$note->title, $note->body, (int) $note->version]);
    }

    public function test_create_requires_a_title(): void
    {
        $r = $this->sync('phone', [
            ['mutation_id' => 'm1', 'op' => 'create', 'note_id' => 'n1', 'data' => ['body' => 'no title']],
            ['mutation_id' => 'm2', 'op' => 'create', 'note_id' => 'n2', 'data' => ['title' => 'No body']],
        ])->assertOk();
        $this->assertSame('rejected', $r->json('results.0.status'));
        $this->assertSame('applied', $r->json('results.1.status'));
        $this->assertNull($this->live('n1'));
        $this->assertSame('', $this->live('n2')->body);
    }
}
