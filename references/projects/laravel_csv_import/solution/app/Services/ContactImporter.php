<?php

namespace App\Services;

use App\Exceptions\UnreadableUpload;
use Illuminate\Support\Carbon;
use Illuminate\Support\Facades\DB;

/**
 * The contact CSV import: streams the file, validates each row on its own,
 * reconciles valid rows with stored contacts by email in batches, and returns
 * a summary of what happened to every row.
 */
class ContactImporter
{
    /** Rows reconciled per round trip (one select and one upsert). */
    private const BATCH = 500;

    private const FORMULA_START = ['=', '+', '-', '@'];

    private const MESSAGES = [
        'invalid_encoding' => 'The row is not valid UTF-8.',
        'wrong_field_count' => 'The row does not have as many fields as the header.',
        'missing_name' => 'The name is missing.',
        'missing_email' => 'The email is missing.',
        'invalid_email' => 'The email is not a valid address.',
        'invalid_phone' => 'The phone number is not valid.',
        'duplicate_email' => 'The email already appears earlier in the file.',
    ];

    /** @var array<string, int> */
    private array $counts;

    /** @var array<int, array{line: int, email: ?string, reason: string, message: string}> */
    private array $errors;

    /**
     * @return array{total: int, imported: int, updated: int, unchanged: int, skipped: int, errors: array}
     *
     * @throws UnreadableUpload when the file cannot be imported at all
     */
    public function import(string $path): array
    {
        $csv = new CsvRecords($path);
        $csv->assertText();
        $records = $csv->records();
        if (! $records->valid()) {
            throw new UnreadableUpload('The file is empty.');
        }
        $columns = $this->columns($records->current());
        $records->next();

        $this->counts = ['total' => 0, 'imported' => 0, 'updated' => 0, 'unchanged' => 0, 'skipped' => 0];
        $this->errors = [];
        DB::transaction(function () use ($records, $columns) {
            $accepted = [];  // emails accepted so far in this file
            $batch = [];
            // the header was read already; foreach would try to rewind
            for (; $records->valid(); $records->next()) {
                $line = $records->key();
                $record = $records->current();
                $this->counts['total']++;
                $contact = $this->row($line, $record, $columns, $accepted);
                if ($contact === null) {
                    continue;
                }
                $accepted[$contact['email']] = true;
                $batch[$contact['email']] = $contact;
                if (count($batch) >= self::BATCH) {
                    $this->reconcile($batch);
                    $batch = [];
                }
            }
            $this->reconcile($batch);
        });

        return $this->counts + ['errors' => $this->errors];
    }

    /**
     * Column positions from the header row.
     *
     * @return array{name: int, email: int, phone: ?int, count: int}
     */
    private function columns(string $header): array
    {
        if (! mb_check_encoding($header, 'UTF-8')) {
            throw new UnreadableUpload('The header row is not valid UTF-8.');
        }
        $names = array_map(fn ($n) => strtolower(trim($n)), CsvRecords::fields($header));
        foreach (['name', 'email'] as $required) {
            if (! in_array($required, $names, true)) {
                throw new UnreadableUpload("The header has no \"$required\" column.");
            }
        }
        $phone = array_search('phone', $names, true);

        return [
            'name' => array_search('name', $names, true),
            'email' => array_search('email', $names, true),
            'phone' => $phone === false ? null : $phone,
            'count' => count($names),
        ];
    }

    /**
     * A valid contact from one record, or null after recording why it is skipped.
     *
     * @param  array<string, true>  $accepted
     * @return array{name: string, email: string, phone: ?string}|null
     */
    private function row(int $line, string $record, array $columns, array $accepted): ?array
    {
        if (! mb_check_encoding($record, 'UTF-8')) {
            return $this->skip($line, null, 'invalid_encoding');
        }
        $fields = CsvRecords::fields($record);
        $email = strtolower(trim($fields[$columns['email']] ?? ''));
        $reportedEmail = $email === '' ? null : $email;
        if (count($fields) !== $columns['count']) {
            return $this->skip($line, $reportedEmail, 'wrong_field_count');
        }
        $name = trim($fields[$columns['name']]);
        $phone = $columns['phone'] === null ? '' : trim($fields[$columns['phone']]);
        $reason = match (true) {
            $name === '' => 'missing_name',
            $email === '' => 'missing_email',
            ! self::validEmail($email) => 'invalid_email',
            $phone !== '' && ! self::validPhone($phone) => 'invalid_phone',
            isset($accepted[$email]) => 'duplicate_email',
            default => null,
        };
        if ($reason !== null) {
            return $this->skip($line, $reportedEmail, $reason);
        }
        if (in_array($name[0], self::FORMULA_START, true)) {
            $name = "'".$name;  // a spreadsheet would run it as a formula
        }

        return ['name' => $name, 'email' => $email, 'phone' => $phone === '' ? null : $phone];
    }

    private function skip(int $line, ?string $email, string $reason): ?array
    {
        $this->counts['skipped']++;
        $this->errors[] = ['line' => $line, 'email' => $email, 'reason' => $reason, 'message' => self::MESSAGES[$reason]];

        return null;
    }

    public static function validEmail(string $email): bool
    {
        if (! preg_match('/^[^@\s]+@([^@\s]+)$/u', $email, $m)) {
            return false;
        }
        $labels = explode('.', $m[1]);

        return count($labels) >= 2 && ! in_array('', $labels, true);
    }

    public static function validPhone(string $phone): bool
    {
        if (! preg_match('/^\+?[0-9 ()\-]+$/', $phone)) {
            return false;
        }
        $digits = strlen(preg_replace('/\D/', '', $phone));

        return $digits >= 3 && $digits <= 15;
    }

    /**
     * Insert new contacts and update changed ones: one select, one upsert.
     *
     * @param  array<string, array{name: string, email: string, phone: ?string}>  $batch  by email
     */
    private function reconcile(array $batch): void
    {
        if (! $batch) {
            return;
        }
        $stored = DB::table('contacts')
            ->whereIn('email', array_keys($batch))
            ->get(['email', 'name', 'phone'])
            ->keyBy('email');
        $now = Carbon::now()->toDateTimeString();
        $writes = [];
        foreach ($batch as $email => $contact) {
            $old = $stored->get($email);
            if ($old !== null && $old->name === $contact['name'] && $old->phone === $contact['phone']) {
                $this->counts['unchanged']++;
                continue;
            }
            $this->counts[$old === null ? 'imported' : 'updated']++;
            $writes[] = $contact + ['created_at' => $now, 'updated_at' => $now];
        }
        if ($writes) {
            DB::table('contacts')->upsert($writes, ['email'], ['name', 'phone', 'updated_at']);
        }
    }
}
