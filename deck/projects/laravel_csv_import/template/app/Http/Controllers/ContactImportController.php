<?php

namespace App\Http\Controllers;

use App\Services\ContactImporter;
use Illuminate\Http\JsonResponse;
use Illuminate\Http\Request;

class ContactImportController extends Controller
{
    /**
     * POST /api/contacts/import (multipart, the CSV in the "file" field).
     */
    public function store(Request $request, ContactImporter $importer): JsonResponse
    {
        $request->validate([
            'file' => ['required', 'file'],
        ]);

        $summary = $importer->import($request->file('file')->getRealPath());

        return response()->json($summary, $summary['errors'] ? 422 : 200);
    }
}
