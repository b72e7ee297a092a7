<?php

namespace App\Services;

use App\Models\Contact;
use Illuminate\Support\Facades\DB;
use Illuminate\Support\Facades\Validator;

/**
 * First pass of the contact import: good enough for the demo file.
 */
class ContactImporter
{
    /**
     * @return array{imported: int, errors: array<int, array{line: int, message: string}>}
     */
    public function import(string $path): array
    {
        $lines = explode("\n", file_get_contents($path));
        $header = explode(',', array_shift($lines));

        $rows = [];
        $errors = [];
        foreach ($lines as $i => $line) {
            if (trim($line) === '') {
                continue;
            }
            $row = array_combine($header, explode(',', $line));
            $validator = Validator::make($row, [
                'name' => 'required',
                'email' => 'required|email',
            ]);
            if ($validator->fails()) {
                $errors[] = ['line' => $i + 2, 'message' => $validator->errors()->first()];
            }
            $rows[] = $row;
        }

        if ($errors) {
            return ['imported' => 0, 'errors' => $errors];
        }

        DB::transaction(function () use ($rows) {
            foreach ($rows as $row) {
                Contact::create([
                    'name' => $row['name'],
                    'email' => $row['email'],
                    'phone' => $row['phone'],
                ]);
            }
        });

        return ['imported' => count($rows), 'errors' => []];
    }
}
