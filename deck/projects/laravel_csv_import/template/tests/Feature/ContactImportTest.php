<?php

namespace Tests\Feature;

use App\Models\Contact;
use Illuminate\Foundation\Testing\RefreshDatabase;
use Illuminate\Http\UploadedFile;
use Tests\TestCase;

class ContactImportTest extends TestCase
{
    use RefreshDatabase;

    public function test_imports_a_small_file(): void
    {
        $csv = "name,email,phone\nAda Lovelace,ada@example.com,555-0100\nAlan Turing,alan@example.com,555-0101\n";

        $response = $this->post('/api/contacts/import', [
            'file' => UploadedFile::fake()->createWithContent('contacts.csv', $csv),
        ], ['Accept' => 'application/json']);

        $response->assertOk()->assertJson(['imported' => 2]);
        $this->assertSame(2, Contact::count());
        $this->assertSame('Ada Lovelace', Contact::where('email', 'ada@example.com')->value('name'));
    }
}
