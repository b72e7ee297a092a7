<?php

namespace Eval;

use App\Models\Contact;
use Illuminate\Contracts\Console\Kernel;
use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Contracts\Http\Kernel as HttpKernel;
use Illuminate\Foundation\Application;
use Illuminate\Foundation\Testing\RefreshDatabase;
use Illuminate\Foundation\Testing\TestCase;
use Illuminate\Http\UploadedFile;
use Illuminate\Testing\TestResponse;

/**
 * Base of the evaluator's tests: boots the workspace's application on its own
 * (not through the workspace's tests/ or bootstrap/), a fresh in-memory database
 * per test, and helpers that upload a CSV and read the summary. A helper named
 * assert... whose first parameter is $expected compares it exactly: the scorer's
 * twins change that argument.
 */
abstract class EvalCase extends TestCase
{
    use RefreshDatabase;

    /** Console output is not mocked (that needs Mockery). */
    public $mockConsoleOutput = false;

    public const URL = '/api/contacts/import';

    /** The application as the template's bootstrap/app.php builds it, built here. */
    public function createApplication()
    {
        $app = new Application(dirname(__DIR__));
        $app->singleton(HttpKernel::class, \App\Http\Kernel::class);
        $app->singleton(Kernel::class, \App\Console\Kernel::class);
        $app->singleton(ExceptionHandler::class, \App\Exceptions\Handler::class);
        $app->make(Kernel::class)->bootstrap();

        return $app;
    }

    protected function upload(string $csv, string $name = 'contacts.csv'): TestResponse
    {
        return $this->post(self::URL, [
            'file' => UploadedFile::fake()->createWithContent($name, $csv),
        ], ['Accept' => 'application/json']);
    }

    /** Upload and return the summary, asserting HTTP 200 and JSON. */
    protected function summary(string $csv): array
    {
        $response = $this->upload($csv);
        $this->assertStatus(200, $response);
        $data = $response->json();
        $this->assertIsArray($data, 'the response is not a JSON object: '.substr($response->getContent(), 0, 300));

        return $data;
    }

    /** The status, with a short excerpt of the body when it is not the expected one. */
    protected function assertStatus(int $expected, TestResponse $response, string $what = 'upload'): void
    {
        $status = $response->getStatusCode();
        $excerpt = substr((string) $response->getContent(), 0, 400);
        if ($response->exception !== null) {
            $excerpt .= ' ['.get_class($response->exception).': '.substr($response->exception->getMessage(), 0, 300).']';
        }
        $excerpt = preg_replace('/\s+/', ' ', $excerpt);
        $this->assertSame($expected, $status, "$what: expected HTTP $expected, got $status: $excerpt");
    }

    /** Assert the summary's counters (only the ones given). */
    protected function assertCounts(array $expected, array $summary): void
    {
        foreach ($expected as $key => $value) {
            $this->assertArrayHasKey($key, $summary, "summary has no \"$key\"");
            $this->assertSame($value, $summary[$key], "summary \"$key\"");
        }
    }

    /** [line, reason] of each error, in order. */
    protected function errorPairs(array $summary): array
    {
        $this->assertArrayHasKey('errors', $summary, 'summary has no "errors"');
        $this->assertIsArray($summary['errors']);

        return array_map(
            fn ($e) => [$e['line'] ?? null, $e['reason'] ?? null],
            $summary['errors']
        );
    }

    protected function contact(string $email): ?Contact
    {
        return Contact::where('email', $email)->first();
    }

    protected function assertStored(string $email, string $name, ?string $phone): void
    {
        $contact = $this->contact($email);
        $this->assertNotNull($contact, "no contact stored with email $email");
        $this->assertSame($name, $contact->name, "name of $email");
        $this->assertSame($phone, $contact->phone, "phone of $email");
    }

    /** A rejected upload: 422 with an error on "file", and nothing written. */
    protected function assertRejected(TestResponse $response, string $what): void
    {
        $this->assertStatus(422, $response, $what);
        $this->assertIsArray($response->json('errors.file'), "$what: no errors.file in the response");
        $this->assertSame(0, Contact::count(), "$what: contacts were written");
    }

    // ---- helpers for the large files -------

    protected static function bigName(int $i): string
    {
        return "Contact Number $i of the Production Sized Import";
    }

    protected static function bigPhone(int $i): string
    {
        return '+1 555 '.sprintf('%07d', $i);
    }

    /**
     * A CSV file of $rows rows (every 200th email invalid) then $repeats repeated
     * emails; $notes adds that many characters of text to every name.
     */
    protected static function bigFile(int $rows, int $repeats, int $notes = 0): string
    {
        $note = $notes > 0 ? ' '.substr(str_repeat('with a long note, ', intdiv($notes, 18) + 1), 0, $notes - 1) : '';
        $path = tempnam(sys_get_temp_dir(), 'eval-csv-');
        $out = fopen($path, 'wb');
        fwrite($out, "name,email,phone\n");
        for ($i = 0; $i < $rows; $i++) {
            $email = $i % 200 === 199 ? "contact$i.example.com" : "contact$i@example.com";
            fwrite($out, '"'.self::bigName($i).$note.'",'.$email.','.self::bigPhone($i)."\n");
        }
        for ($i = 0; $i < $repeats; $i++) {
            fwrite($out, "Repeat $i,CONTACT$i@EXAMPLE.COM,".self::bigPhone($i)."\n");
        }
        fclose($out);

        return $path;
    }
}
