<?php

namespace App\Http\Controllers;

use App\Exceptions\UnreadableUpload;
use App\Services\ContactImporter;
use Illuminate\Http\JsonResponse;
use Illuminate\Http\Request;
use Illuminate\Validation\ValidationException;

class ContactImportController extends Controller
{
    /** Largest upload accepted, in kilobytes (10 MB). */
    public const MAX_KILOBYTES = 10240;

    /**
     * POST /api/contacts/import (multipart, the CSV in the "file" field).
     *
     * A file that cannot be imported at all is a 422 with Laravel's validation
     * shape; otherwise a 200 with the reconciliation summary, bad rows included.
     */
    public function store(Request $request, ContactImporter $importer): JsonResponse
    {
        $request->validate([
            'file' => ['required', 'file', 'max:'.self::MAX_KILOBYTES],
        ]);

        try {
            $summary = $importer->import($request->file('file')->getRealPath());
        } catch (UnreadableUpload $e) {
            throw ValidationException::withMessages(['file' => [$e->getMessage()]]);
        }

        return response()->json($summary);
    }
}
