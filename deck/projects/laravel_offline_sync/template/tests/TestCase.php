<?php

namespace Tests;

use Illuminate\Foundation\Testing\TestCase as BaseTestCase;

abstract class TestCase extends BaseTestCase
{
    use CreatesApplication;

    /** Console output is not mocked: Mockery is not installed. */
    public $mockConsoleOutput = false;
}
