<?php

namespace Eval;

require_once __DIR__.'/EvalCase.php';

use App\Models\Contact;
use Illuminate\Http\UploadedFile;
use Illuminate\Support\Facades\DB;
use Illuminate\Support\Facades\Schema;

/**
 * The CSV import's contract, one check per test (see the task's score map).
 */
class CsvImportEvalTest extends EvalCase
{
    private const HEADER = "name,email,phone\n";

    // ---- floor ----------------------------------------------------------

    public function test_imports_a_clean_file(): void
    {
        $summary = $this->summary(self::HEADER
            ."Ada Lovelace,ada@example.com,555-0100\n"
            ."Alan Turing,alan@example.com,555-0101\n"
            ."Grace Hopper,grace@example.com,555-0102\n");

        $this->assertSame(3, $summary['imported'] ?? null, 'imported');
        $this->assertSame(3, Contact::count());
        $this->assertStored('alan@example.com', 'Alan Turing', '555-0101');
    }

    // ---- the structured summary ----------------------------------------

    public function test_summary_has_the_documented_shape(): void
    {
        Contact::create(['name' => 'Old', 'email' => 'old@example.com', 'phone' => null]);
        Contact::create(['name' => 'Same', 'email' => 'same@example.com', 'phone' => '555-0103']);
        $summary = $this->summary(self::HEADER
            ."New,new@example.com,555-0100\n"
            ."Changed,old@example.com,555-0101\n"
            ."Same,same@example.com,555-0103\n"
            ."Bad,bad-email,555-0102\n");

        foreach (['total', 'imported', 'updated', 'unchanged', 'skipped'] as $key) {
            $this->assertArrayHasKey($key, $summary, "summary has no \"$key\"");
            $this->assertIsInt($summary[$key], "\"$key\" is not an integer");
        }
        $this->assertCounts(['total' => 4, 'imported' => 1, 'updated' => 1, 'unchanged' => 1, 'skipped' => 1], $summary);
        $this->assertIsArray($summary['errors'] ?? null, 'errors');
        $this->assertCount(1, $summary['errors']);
        $error = $summary['errors'][0];
        foreach (['line', 'email', 'reason', 'message'] as $key) {
            $this->assertArrayHasKey($key, $error, "error has no \"$key\"");
        }
        $this->assertSame(5, $error['line']);
        $this->assertSame('bad-email', $error['email']);
        $this->assertSame('invalid_email', $error['reason']);
        $this->assertIsString($error['message']);
        $this->assertNotSame('', $error['message']);
    }

    public function test_mixed_file_salvages_valid_rows(): void
    {
        $summary = $this->summary(self::HEADER
            ."Alice,alice@example.com,111\n"
            ."Bad,not-an-email,222\n"
            ."NoEmail,,333\n");

        $this->assertGreaterThanOrEqual(1, $summary['imported'] ?? 0);
        $this->assertGreaterThanOrEqual(2, $summary['skipped'] ?? 0);
        $this->assertSame([[3, 'invalid_email'], [4, 'missing_email']], $this->errorPairs($summary));
        $this->assertTrue(array_key_exists('email', $summary['errors'][1]), 'error has no "email"');
        $this->assertNull($summary['errors'][1]['email'], 'a missing email is reported as null');
        $this->assertStored('alice@example.com', 'Alice', '111');
        $this->assertSame(1, Contact::count());
    }

    public function test_error_lines_are_physical_lines(): void
    {
        $summary = $this->summary(self::HEADER
            ."Ada,ada@example.com,555-0100\n"
            ."\"Multi\nline\",multi@example.com,555-0101\n"
            ."\n"
            ."Bad,bad-email,555-0102\n"
            ."\"Also\nmulti\",,555-0103\n"
            ."Last,last@example.com,12\n");

        $this->assertSame([[6, 'invalid_email'], [7, 'missing_email'], [9, 'invalid_phone']], $this->errorPairs($summary));
        $this->assertCounts(['total' => 5, 'imported' => 2, 'skipped' => 3], $summary);
    }

    // ---- duplicates and idempotency --------------------------------------

    public function test_duplicate_emails_in_one_file(): void
    {
        $summary = $this->summary(self::HEADER
            ."Ada,ada@example.com,555-0100\n"
            ."Ada Again, ADA@Example.com ,555-0199\n"
            ."Bob,bob@example.com,\n"
            ."Bob Two,bob@example.com,\n"
            ."Carl,carl@example.com,12\n"
            ."Carl,carl@example.com,555-0300\n");

        $this->assertSame([[3, 'duplicate_email'], [5, 'duplicate_email'], [6, 'invalid_phone']], $this->errorPairs($summary));
        $this->assertSame('ada@example.com', $summary['errors'][0]['email'] ?? null);
        $this->assertCounts(['total' => 6, 'imported' => 3, 'skipped' => 3], $summary);
        $this->assertSame(3, Contact::count());
        $this->assertStored('ada@example.com', 'Ada', '555-0100');
        $this->assertStored('carl@example.com', 'Carl', '555-0300');
    }

    public function test_reimport_is_idempotent(): void
    {
        $csv = self::HEADER
            ."Ada,ada@example.com,555-0100\n"
            ."Bob,bob@example.com,\n"
            ."Carl,carl@example.com,555-0300\n";
        $first = $this->summary($csv);
        $this->assertCounts(['total' => 3, 'imported' => 3, 'unchanged' => 0], $first);
        $before = Contact::orderBy('id')->get(['id', 'name', 'email', 'phone'])->toArray();

        $second = $this->summary($csv);
        $this->assertCounts(['total' => 3, 'imported' => 0, 'updated' => 0, 'unchanged' => 3, 'skipped' => 0], $second);
        $this->assertSame([], $second['errors'] ?? null);
        $this->assertSame($before, Contact::orderBy('id')->get(['id', 'name', 'email', 'phone'])->toArray());
    }

    public function test_existing_contact_is_updated(): void
    {
        Contact::create(['name' => 'Ada Old', 'email' => 'ada@example.com', 'phone' => '555-0000']);
        Contact::create(['name' => 'Bob', 'email' => 'bob@example.com', 'phone' => null]);
        $summary = $this->summary(self::HEADER
            ."Ada Lovelace,ada@example.com,555-0100\n"
            ."Bob,bob@example.com,\n"
            ."Carl,carl@example.com,555-0300\n");

        $this->assertCounts(['total' => 3, 'imported' => 1, 'updated' => 1, 'unchanged' => 1, 'skipped' => 0], $summary);
        $this->assertSame(3, Contact::count());
        $this->assertStored('ada@example.com', 'Ada Lovelace', '555-0100');
        $this->assertStored('bob@example.com', 'Bob', null);
    }

    public function test_emails_are_normalised(): void
    {
        Contact::create(['name' => 'Grace', 'email' => 'grace@example.com', 'phone' => null]);
        $summary = $this->summary(self::HEADER
            ."  Ada Lovelace  ,  Ada@Example.COM  ,  555-0100  \n"
            ."Grace,GRACE@example.com,\n");

        $this->assertCounts(['total' => 2, 'imported' => 1, 'unchanged' => 1, 'skipped' => 0], $summary);
        $this->assertSame(2, Contact::count());
        $this->assertStored('ada@example.com', 'Ada Lovelace', '555-0100');
        $this->assertSame(0, Contact::where('email', '!=', DB::raw('lower(email)'))->count(), 'an email is stored with capitals');
    }

    // ---- CSV parsing and encoding ----------------------------------------

    public function test_quoted_commas(): void
    {
        $summary = $this->summary(self::HEADER
            ."\"Lovelace, Ada\",ada@example.com,\"555-0100\"\n"
            ."Bob,bob@example.com,\"(555) 010-0101\"\n");

        $this->assertSame(2, $summary['imported'] ?? null, 'imported');
        $this->assertStored('ada@example.com', 'Lovelace, Ada', '555-0100');
        $this->assertStored('bob@example.com', 'Bob', '(555) 010-0101');
    }

    public function test_quoted_newlines(): void
    {
        $summary = $this->summary(self::HEADER
            ."\"Ada\nLovelace\",ada@example.com,555-0100\n"
            ."Bob,bob@example.com,555-0101\n");

        $this->assertSame(2, $summary['imported'] ?? null, 'imported');
        $this->assertStored('ada@example.com', "Ada\nLovelace", '555-0100');
        $this->assertStored('bob@example.com', 'Bob', '555-0101');
    }

    public function test_escaped_quotes(): void
    {
        $summary = $this->summary(self::HEADER
            ."\"Ada \"\"The Countess\"\" Lovelace\",ada@example.com,555-0100\n"
            ."\"\"\"Quoted\"\"\",q@example.com,\n");

        $this->assertSame(2, $summary['imported'] ?? null, 'imported');
        $this->assertStored('ada@example.com', 'Ada "The Countess" Lovelace', '555-0100');
        $this->assertStored('q@example.com', '"Quoted"', null);
    }

    public function test_byte_order_mark(): void
    {
        $summary = $this->summary("\xEF\xBB\xBF".self::HEADER
            ."Ada,ada@example.com,555-0100\n"
            ."Bob,bob@example.com,555-0101\n");

        $this->assertSame(2, $summary['imported'] ?? null, 'imported');
        $this->assertStored('ada@example.com', 'Ada', '555-0100');
    }

    public function test_crlf_line_endings(): void
    {
        $summary = $this->summary("name,email,phone\r\n"
            ."Ada,ada@example.com,555-0100\r\n"
            ."\"Bob\r\nSmith\",bob@example.com,555-0101\r\n"
            ."Carl,carl@example.com,\r\n"
            ."Bad,bad-email,555-0103\r\n");

        $this->assertCounts(['total' => 4, 'imported' => 3, 'skipped' => 1], $summary);
        $this->assertSame([[6, 'invalid_email']], $this->errorPairs($summary));
        $this->assertStored('ada@example.com', 'Ada', '555-0100');
        $this->assertStored('carl@example.com', 'Carl', null);
        $this->assertSame('555-0101', $this->contact('bob@example.com')?->phone);
    }

    public function test_invalid_bytes_row_salvaged(): void
    {
        $summary = $this->summary(self::HEADER
            ."Ada,ada@example.com,555-0100\n"
            ."Bad\xFF\xFE,bad@example.com,555-0101\n"
            ."Zo\xEB Latin1,zoe@example.com,555-0102\n"
            ."Bob,bob@example.com,555-0103\n");

        $this->assertSame([[3, 'invalid_encoding'], [4, 'invalid_encoding']], $this->errorPairs($summary));
        $this->assertCounts(['total' => 4, 'imported' => 2, 'skipped' => 2], $summary);
        $this->assertNull($this->contact('bad@example.com'));
        $this->assertNull($this->contact('zoe@example.com'));
        $this->assertSame(2, Contact::count());
    }

    public function test_non_ascii_text_kept(): void
    {
        $names = [
            'zoe@example.com' => 'Zoë Ñúñez',
            'bruce@example.com' => '李小龍',
            'eleni@example.com' => 'Ελένη Παππά',
            'maryam@example.com' => 'مريم ميرزاخاني',
            'dev@example.com' => 'Ada 👩‍💻',
        ];
        $csv = self::HEADER;
        foreach ($names as $email => $name) {
            $csv .= "$name,$email,555-0100\n";
        }
        $summary = $this->summary($csv);

        $this->assertSame(5, $summary['imported'] ?? null, 'imported');
        foreach ($names as $email => $name) {
            $this->assertStored($email, $name, '555-0100');
        }
    }

    public function test_blank_lines_ignored(): void
    {
        $summary = $this->summary("\n\n".self::HEADER
            ."\n"
            ."Ada,ada@example.com,555-0100\n"
            ."   \n"
            ."Bob,bob@example.com,555-0101\n"
            ."\n\n");

        $this->assertCounts(['total' => 2, 'imported' => 2, 'skipped' => 0], $summary);
        $this->assertSame([], $summary['errors'] ?? null);
    }

    // ---- row validation --------------------------------------------------

    public function test_invalid_emails_rejected(): void
    {
        $bad = ['not-an-email', 'ada@', '@example.com', 'ada@example', 'a b@example.com',
            'ada@@example.com', 'ada@example..com', 'ada@.example.com', 'ada@example.com.'];
        $csv = self::HEADER."Ok,ok@example.com,555-0100\n";
        foreach ($bad as $i => $email) {
            $csv .= "Bad $i,$email,555-0100\n";
        }
        $csv .= "Also Ok,Ada.O'Brien+tag@sub.example.co.uk,555-0101\n";
        $summary = $this->summary($csv);

        $expected = array_map(fn ($i) => [$i + 3, 'invalid_email'], array_keys($bad));
        $this->assertSame($expected, $this->errorPairs($summary));
        $this->assertCounts(['imported' => 2, 'skipped' => count($bad)], $summary);
        $this->assertNotNull($this->contact("ada.o'brien+tag@sub.example.co.uk"));
    }

    public function test_missing_name_rejected(): void
    {
        $summary = $this->summary(self::HEADER
            .",ada@example.com,555-0100\n"
            ."   ,bob@example.com,\n"
            ."Carl,carl@example.com,555-0102\n");

        $this->assertSame([[2, 'missing_name'], [3, 'missing_name']], $this->errorPairs($summary));
        $this->assertSame('ada@example.com', $summary['errors'][0]['email'] ?? null);
        $this->assertCounts(['imported' => 1, 'skipped' => 2], $summary);
        $this->assertSame(1, Contact::count());
    }

    public function test_wrong_field_count_salvaged(): void
    {
        $summary = $this->summary(self::HEADER
            ."Ada,ada@example.com\n"
            ."Bob,bob@example.com,555-0101,extra\n"
            ."Carl,carl@example.com,555-0102\n"
            ."\"Dan, Jr\",dan@example.com,555-0103,\n");

        $this->assertSame([[2, 'wrong_field_count'], [3, 'wrong_field_count'], [5, 'wrong_field_count']], $this->errorPairs($summary));
        $this->assertCounts(['total' => 4, 'imported' => 1, 'skipped' => 3], $summary);
        $this->assertSame(1, Contact::count());
        $this->assertStored('carl@example.com', 'Carl', '555-0102');
    }

    public function test_invalid_phone_rejected(): void
    {
        $bad = ['abc', '12', '+', '555-12x4', '1234567890123456', '555.0100', '++44 20 7946 0958'];
        $good = ['+44 20 7946 0958', '(555) 010-0100', '911'];
        $csv = self::HEADER;
        foreach ($bad as $i => $phone) {
            $csv .= "Bad $i,bad$i@example.com,$phone\n";
        }
        foreach ($good as $i => $phone) {
            $csv .= "Good $i,good$i@example.com,$phone\n";
        }
        $summary = $this->summary($csv);

        $this->assertCounts(['imported' => 3, 'skipped' => 7], $summary);
        $expected = array_map(fn ($i) => [$i + 2, 'invalid_phone'], array_keys($bad));
        $this->assertSame($expected, $this->errorPairs($summary));
        $this->assertStored('good0@example.com', 'Good 0', '+44 20 7946 0958');
    }

    // ---- hostile uploads --------------------------------------------------

    public function test_missing_or_non_file_upload_rejected(): void
    {
        $response = $this->post(self::URL, [], ['Accept' => 'application/json']);
        $this->assertStatus(422, $response, 'no file field');
        $this->assertRejected($response, 'no file field');
        $this->assertRejected(
            $this->post(self::URL, ['file' => self::HEADER."Ada,ada@example.com,\n"], ['Accept' => 'application/json']),
            'file given as text');
        $this->assertRejected(
            $this->post(self::URL, ['file' => ['a', 'b']], ['Accept' => 'application/json']),
            'file given as a list');
    }

    public function test_empty_file_rejected_header_only_accepted(): void
    {
        $this->assertRejected($this->upload(''), 'empty file');
        $this->assertRejected($this->upload("\xEF\xBB\xBF"), 'byte-order mark alone');
        $this->assertRejected($this->upload("\n \r\n\n"), 'blank lines alone');

        $summary = $this->summary(self::HEADER);
        $this->assertCounts(['total' => 0, 'imported' => 0, 'updated' => 0, 'unchanged' => 0, 'skipped' => 0], $summary);
        $this->assertSame([], $summary['errors'] ?? null);
    }

    public function test_missing_required_column_rejected(): void
    {
        $response = $this->upload("name,phone\nAda,555-0100\n");
        $this->assertStatus(422, $response, 'no email column');
        $this->assertRejected($response, 'no email column');
        $this->assertRejected($this->upload("email,phone\nada@example.com,555-0100\n"), 'no name column');
        $this->assertRejected($this->upload("Ada,ada@example.com,555-0100\n"), 'a data row as header');
    }

    public function test_binary_and_oversized_uploads_rejected(): void
    {
        $png = "\x89PNG\r\n\x1A\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1F\x15\xC4\x89";
        $response = $this->upload($png, 'contacts.png');
        $this->assertStatus(422, $response, 'a PNG image');
        $this->assertRejected($response, 'a PNG image');
        $this->assertRejected($this->upload(self::HEADER."Ada,ada@example.com,555-0100\0\n"), 'a NUL byte');

        $row = str_repeat('x', 1000);
        $big = self::HEADER;
        for ($i = 0; strlen($big) <= 11 * 1024 * 1024; $i++) {
            $big .= "$row $i,big$i@example.com,555-0100\n";
        }
        $this->assertRejected($this->upload($big), 'an 11 MB file');
    }

    // ---- injection-shaped content ------------------------------------------

    public function test_injection_shaped_content_stored_verbatim(): void
    {
        $rows = [
            'bobby@example.com' => "Robert'); DROP TABLE contacts;--",
            'xss@example.com' => '<script>alert(1)</script>',
            "o'brien@example.com" => "O'Brien \\ \"; SELECT 1",
            'tmpl@example.com' => '{{ 7*7 }} ${7*7}',
        ];
        $csv = self::HEADER;
        foreach ($rows as $email => $name) {
            $csv .= '"'.str_replace('"', '""', $name).'",'.$email.",555-0100\n";
        }
        $summary = $this->summary($csv);

        $this->assertSame(4, $summary['imported'] ?? null, 'imported');
        $this->assertTrue(Schema::hasTable('contacts'), 'the contacts table is gone');
        foreach ($rows as $email => $name) {
            $this->assertStored($email, $name, '555-0100');
        }
    }

    public function test_formula_injection_neutralised(): void
    {
        $rows = [
            'f1@example.com' => ['=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'],
            'f2@example.com' => ['+1+2', "'+1+2"],
            'f3@example.com' => ['-2+3', "'-2+3"],
            'f4@example.com' => ['@SUM(A1)', "'@SUM(A1)"],
            'f5@example.com' => ['  =1+1', "'=1+1"],
            'ok@example.com' => ['Ada =1', 'Ada =1'],
        ];
        $csv = self::HEADER;
        foreach ($rows as $email => [$name]) {
            $csv .= '"'.str_replace('"', '""', $name).'",'.$email.",+44 20 7946 0958\n";
        }
        $summary = $this->summary($csv);

        $this->assertSame(6, $summary['imported'] ?? null, 'imported');
        foreach ($rows as $email => [, $stored]) {
            $this->assertStored($email, $stored, '+44 20 7946 0958');
        }
    }

    // ---- batching and production-sized files -------------------------------

    public function test_database_work_is_batched(): void
    {
        $csv = self::HEADER;
        for ($i = 0; $i < 1000; $i++) {
            $csv .= "Contact $i,c$i@example.com,555-".sprintf('%04d', $i)."\n";
        }
        $file = UploadedFile::fake()->createWithContent('contacts.csv', $csv);
        $queries = 0;
        DB::listen(function () use (&$queries) {
            $queries++;
        });
        $response = $this->post(self::URL, ['file' => $file], ['Accept' => 'application/json']);

        $this->assertStatus(200, $response);
        $this->assertSame(1000, $response->json('imported'));
        $this->assertSame(1000, Contact::count());
        $this->assertLessThanOrEqual(60, $queries, "$queries queries for 1,000 rows (at most 60 allowed)");
    }

    public function test_large_file_imports_completely(): void
    {
        // 20,000 rows and 50 repeated emails; every 200th email is invalid; the first
        // 1,000 contacts exist already, half of them with an outdated name.
        $existing = [];
        for ($i = 0; $i < 1000; $i++) {
            $existing[] = [
                'name' => $i < 500 ? self::bigName($i) : "Outdated $i",
                'email' => "contact$i@example.com",
                'phone' => self::bigPhone($i),
            ];
        }
        foreach (array_chunk($existing, 200) as $chunk) {
            DB::table('contacts')->insert($chunk);
        }
        $path = self::bigFile(20000, 50);
        $response = $this->post(self::URL, [
            'file' => new UploadedFile($path, 'big.csv', 'text/csv', null, true),
        ], ['Accept' => 'application/json']);
        @unlink($path);

        $this->assertStatus(200, $response);
        $invalid = fn ($from, $to) => count(array_filter(range($from, $to), fn ($i) => $i % 200 === 199));
        $summary = $response->json();
        $this->assertCounts([
            'total' => 20050,
            'imported' => 19000 - $invalid(1000, 19999),
            'updated' => 500 - $invalid(500, 999),
            'unchanged' => 500 - $invalid(0, 499),
            'skipped' => 100 + 50,
        ], $summary);
        $this->assertCount(150, $summary['errors'] ?? []);
        $this->assertSame([201, 'invalid_email'], [$summary['errors'][0]['line'] ?? null, $summary['errors'][0]['reason'] ?? null]);
        $this->assertSame([20002, 'duplicate_email'], [$summary['errors'][100]['line'] ?? null, $summary['errors'][100]['reason'] ?? null]);
        $this->assertSame(20000 - 95, Contact::count());
        $this->assertSame(Contact::count(), (int) DB::table('contacts')->distinct()->count(DB::raw('lower(email)')));
        $this->assertStored('contact777@example.com', self::bigName(777), self::bigPhone(777));
        $this->assertStored('contact19998@example.com', self::bigName(19998), self::bigPhone(19998));
    }
}
