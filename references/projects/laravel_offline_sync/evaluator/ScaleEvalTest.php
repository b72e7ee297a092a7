<?php

namespace Tests\Eval;

use App\Models\Note;

class ScaleEvalTest extends SyncTestCase
{
    public function test_thousand_mutation_batch(): void
    {
        $batch = [];
        for ($i = 0; $i < 1000; $i++) {
            $batch[] = $this->createOp("m$i", "n$i", "Note $i", str_repeat('lorem ipsum ', 20));
        }
        $r = $this->sync('phone', $batch)->assertOk();
        $results = $r->json('results');
        $this->assertCount(1000, $results);
        $this->assertSame(array_column($batch, 'mutation_id'), array_column($results, 'mutation_id'));
        $this->assertSame(['applied'], array_values(array_unique(array_column($results, 'status'))));
        $this->assertSame(1000, Note::count());
        $feed = $this->pullAll('laptop');
        $this->assertCount(1000, $feed);
        $this->assertCount(1000, array_unique(array_column($feed, 'note_id')));
    }

    public function test_oversized_batch_is_refused_cleanly(): void
    {
        $batch = [];
        for ($i = 0; $i < 1001; $i++) {
            $batch[] = $this->createOp("m$i", "n$i");
        }
        $r = $this->sync('phone', $batch);
        $this->assertContains($r->status(), [413, 422]);
        $this->assertIsArray($r->json());
        $this->assertSame(0, Note::count());
    }
}
