<?php

use App\Http\Controllers\ContactImportController;
use Illuminate\Support\Facades\Route;

Route::post('/contacts/import', [ContactImportController::class, 'store']);
