<?php

namespace Eval;

require_once __DIR__.'/EvalCase.php';

use App\Models\Contact;
use Illuminate\Http\UploadedFile;

/**
 * The optional resource check: a 20,000-row import in bounded memory.
 */
class MemoryEvalTest extends EvalCase
{
    public const ALLOWED_BYTES = 8 * 1024 * 1024;

    public function test_large_file_memory_is_bounded(): void
    {
        $path = self::bigFile(20000, 0, 250);  // about 7 MB
        $file = new UploadedFile($path, 'big.csv', 'text/csv', null, true);
        // Warm up first, so that loading classes and compiling routes is not counted.
        $this->assertStatus(200, $this->upload("name,email,phone\nW,w@example.com,\n"), 'warm-up');

        gc_collect_cycles();
        $base = memory_get_usage();
        memory_reset_peak_usage();
        $response = $this->post(self::URL, ['file' => $file], ['Accept' => 'application/json']);
        $used = memory_get_peak_usage() - $base;
        @unlink($path);

        $this->assertStatus(200, $response);
        $this->assertSame(20000 - 100 + 1, Contact::count());
        $this->assertLessThanOrEqual(self::ALLOWED_BYTES, $used,
            sprintf('peak memory %.1f MB above the baseline (at most %.0f MB allowed)', $used / 1048576, self::ALLOWED_BYTES / 1048576));
    }
}
