<?php

return [
    'file' => 'The :attribute must be a file.',
    'max' => [
        'file' => 'The :attribute must not be greater than :max kilobytes.',
        'numeric' => 'The :attribute must not be greater than :max.',
        'string' => 'The :attribute must not be greater than :max characters.',
        'array' => 'The :attribute must not have more than :max items.',
    ],
    'required' => 'The :attribute field is required.',
    'uploaded' => 'The :attribute failed to upload.',
    'email' => 'The :attribute must be a valid email address.',
    'string' => 'The :attribute must be a string.',

    'custom' => [],
    'attributes' => [],
];
