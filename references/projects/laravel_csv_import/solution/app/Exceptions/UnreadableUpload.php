<?php

namespace App\Exceptions;

use RuntimeException;

/**
 * The upload cannot be imported at all (binary, empty, no usable header).
 * The message is shown to the client.
 */
class UnreadableUpload extends RuntimeException
{
}
