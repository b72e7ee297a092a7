<?php

namespace App\Services;

use App\Exceptions\UnreadableUpload;
use Generator;

/**
 * A CSV file read as a stream of records, with the physical line each starts on.
 *
 * A record goes on over line breaks while a quoted field is open (an odd number
 * of quotes so far); fields are split by str_getcsv without an escape character,
 * which is RFC 4180. Records are yielded raw so that the caller can check the
 * encoding of each one on its own: one bad row must not sink the file.
 */
class CsvRecords
{
    private const BOM = "\xEF\xBB\xBF";

    public function __construct(private string $path)
    {
    }

    /** Refuse binary files (a NUL byte anywhere), reading in chunks. */
    public function assertText(): void
    {
        $handle = $this->open();
        try {
            while (! feof($handle)) {
                $chunk = fread($handle, 1 << 16);
                if ($chunk === false || str_contains($chunk, "\0")) {
                    throw new UnreadableUpload('The file must be a CSV text file, not binary data.');
                }
            }
        } finally {
            fclose($handle);
        }
    }

    /**
     * Non-blank records: line number => raw text (line break removed).
     *
     * @return Generator<int, string>
     */
    public function records(): Generator
    {
        $handle = $this->open();
        $line = 0;
        try {
            while (($text = fgets($handle)) !== false) {
                $line++;
                if ($line === 1 && str_starts_with($text, self::BOM)) {
                    $text = substr($text, strlen(self::BOM));
                }
                $start = $line;
                while (substr_count($text, '"') % 2 === 1 && ($more = fgets($handle)) !== false) {
                    $text .= $more;
                    $line++;
                }
                $record = rtrim($text, "\r\n");
                if (trim($record) !== '') {
                    yield $start => $record;
                }
            }
        } finally {
            fclose($handle);
        }
    }

    /** @return array<int, string> the fields of one record */
    public static function fields(string $record): array
    {
        return array_map(fn ($f) => (string) $f, str_getcsv($record, ',', '"', ''));
    }

    /** @return resource */
    private function open()
    {
        $handle = @fopen($this->path, 'rb');
        if ($handle === false) {
            throw new UnreadableUpload('The file could not be read.');
        }

        return $handle;
    }
}
