<?php

namespace App\Models;

use Illuminate\Database\Eloquent\Model;

class SyncChange extends Model
{
    public const UPDATED_AT = null;

    protected $fillable = ['note_id', 'device_id', 'mutation_id', 'op', 'version', 'payload'];

    protected $casts = ['version' => 'integer', 'payload' => 'array'];

    public function toSyncArray(): array
    {
        return [
            'seq' => $this->id,
            'note_id' => $this->note_id,
            'op' => $this->op,
            'version' => $this->version,
            'note' => $this->payload,
        ];
    }
}
