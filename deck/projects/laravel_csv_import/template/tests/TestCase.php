<?php

namespace Tests;

use Illuminate\Foundation\Testing\TestCase as BaseTestCase;

abstract class TestCase extends BaseTestCase
{
    use CreatesApplication;

    /**
     * Console output is not mocked: that needs Mockery, which is not installed.
     *
     * @var bool
     */
    public $mockConsoleOutput = false;
}
