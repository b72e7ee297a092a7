<?php

namespace App\Models;

use Illuminate\Database\Eloquent\Model;

/**
 * A contact. The email address is the natural key: one contact per address.
 *
 * @property int $id
 * @property string $name
 * @property string $email
 * @property string|null $phone
 */
class Contact extends Model
{
    protected $fillable = ['name', 'email', 'phone'];
}
