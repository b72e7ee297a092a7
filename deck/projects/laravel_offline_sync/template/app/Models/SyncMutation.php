<?php

namespace App\Models;

use Illuminate\Database\Eloquent\Model;

class SyncMutation extends Model
{
    protected $fillable = ['device_id', 'mutation_id', 'request_hash', 'status', 'result'];

    protected $casts = ['result' => 'array'];
}
