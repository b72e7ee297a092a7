<?php

/*
 * Class loading without Composer.
 *
 * Laravel 8.83 and PHPUnit 9.6 come from the system's PHP packages, which live
 * under the include path (/usr/share/php) and each ship an autoload.php of their
 * own. This file loads those, then maps the application's namespaces onto its
 * folders the way composer.json's "autoload" section would (PSR-4):
 *
 *     App\      => app/
 *     Database\ => database/ (factories, seeders)
 *     Tests\    => tests/
 *
 * Add a namespace here if you add a top-level source folder.
 */

require_once 'Illuminate/autoload.php';

// PHPUnit's own entry point loads it already; the tests' base classes need it too
// when a test file is run some other way.
if (stream_resolve_include_path('PHPUnit/Autoload.php')) {
    require_once 'PHPUnit/Autoload.php';
}

spl_autoload_register(static function (string $class): void {
    static $roots = null;
    $roots ??= [
        'App\\' => __DIR__.'/../app/',
        'Database\\' => __DIR__.'/../database/',
        'Tests\\' => __DIR__.'/../tests/',
    ];
    foreach ($roots as $prefix => $dir) {
        if (strncmp($class, $prefix, strlen($prefix)) === 0) {
            $file = $dir.str_replace('\\', '/', substr($class, strlen($prefix))).'.php';
            if (is_file($file)) {
                require $file;
            }

            return;
        }
    }
});
