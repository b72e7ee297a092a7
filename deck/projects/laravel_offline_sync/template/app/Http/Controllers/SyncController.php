<?php

namespace App\Http\Controllers;

use App\Services\SyncService;
use Illuminate\Http\JsonResponse;
use Illuminate\Http\Request;

class SyncController
{
    public function __invoke(Request $request, SyncService $sync): JsonResponse
    {
        return response()->json($sync->sync($request->all()));
    }
}
