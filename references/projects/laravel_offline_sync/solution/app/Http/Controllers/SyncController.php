<?php

namespace App\Http\Controllers;

use App\Services\SyncService;
use Illuminate\Http\JsonResponse;
use Illuminate\Http\Request;

class SyncController
{
    public function __invoke(Request $request, SyncService $sync): JsonResponse
    {
        $raw = $request->getContent();
        $input = json_decode($raw === '' ? '{}' : $raw, true, 64);
        if (json_last_error() !== JSON_ERROR_NONE) {
            return $this->error(400, 'malformed_json', 'The request body is not valid JSON: '.json_last_error_msg());
        }
        if (! is_array($input) || ($input !== [] && array_is_list($input))) {
            return $this->error(422, 'invalid_request', 'The request body must be a JSON object.');
        }
        $problem = $sync->validateRequest($input);
        if ($problem !== null) {
            return $this->error($problem[0], $problem[1], $problem[2]);
        }

        return response()->json($sync->sync($input));
    }

    private function error(int $status, string $code, string $message): JsonResponse
    {
        return response()->json([
            'error' => ['code' => $code, 'message' => $message],
            'results' => [],
            'changes' => [],
        ], $status);
    }
}
