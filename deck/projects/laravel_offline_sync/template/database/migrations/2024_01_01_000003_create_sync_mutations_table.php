<?php

use Illuminate\Database\Migrations\Migration;
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Support\Facades\Schema;

return new class extends Migration
{
    public function up(): void
    {
        // Mutations the server has processed, per device.
        Schema::create('sync_mutations', function (Blueprint $table) {
            $table->id();
            $table->string('device_id', 100);
            $table->string('mutation_id', 100);
            $table->string('request_hash', 64)->nullable();
            $table->string('status', 20);
            $table->text('result');
            $table->timestamps();
            $table->unique(['device_id', 'mutation_id']);
        });
    }

    public function down(): void
    {
        Schema::dropIfExists('sync_mutations');
    }
};
