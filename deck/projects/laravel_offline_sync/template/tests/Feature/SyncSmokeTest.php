<?php

namespace Tests\Feature;

use Illuminate\Foundation\Testing\RefreshDatabase;
use Tests\TestCase;

class SyncSmokeTest extends TestCase
{
    use RefreshDatabase;

    public function test_a_created_note_is_in_the_change_feed(): void
    {
        $this->postJson('/api/sync', [
            'device_id' => 'phone',
            'cursor' => 0,
            'mutations' => [[
                'mutation_id' => 'm-1',
                'op' => 'create',
                'note_id' => 'note-1',
                'data' => ['title' => 'Groceries', 'body' => 'milk'],
            ]],
        ])->assertOk()
            ->assertJsonPath('results.0.status', 'applied')
            ->assertJsonPath('changes.0.note.title', 'Groceries');
    }
}
