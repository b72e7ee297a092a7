<?php

namespace App\Models;

use Illuminate\Database\Eloquent\Model;

class Note extends Model
{
    public $incrementing = false;

    protected $keyType = 'string';

    protected $fillable = ['id', 'title', 'body', 'version', 'deleted_at'];

    protected $casts = ['version' => 'integer', 'deleted_at' => 'datetime'];

    public function toSyncArray(): array
    {
        return [
            'id' => $this->id,
            'title' => $this->title,
            'body' => $this->body,
            'version' => $this->version,
            'deleted' => $this->deleted_at !== null,
        ];
    }
}
