<?php

use Illuminate\Database\Migrations\Migration;
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Support\Facades\Schema;

return new class extends Migration
{
    public function up(): void
    {
        // The change feed: `id` is the sequence number cursors point into.
        Schema::create('sync_changes', function (Blueprint $table) {
            $table->id();
            $table->string('note_id', 64)->index();
            $table->string('device_id', 100);
            $table->string('mutation_id', 100)->nullable();
            $table->string('op', 10);
            $table->unsignedInteger('version');
            $table->text('payload');
            $table->timestamp('created_at')->nullable();
        });
    }

    public function down(): void
    {
        Schema::dropIfExists('sync_changes');
    }
};
