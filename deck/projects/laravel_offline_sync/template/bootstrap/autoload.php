<?php

/*
 * Class loading without Composer: the application's own classes (App\, Tests\)
 * by PSR-4 from this checkout, and the framework, its dependencies and PHPUnit
 * from the system's PHP include path (Debian's php-laravel-framework and phpunit,
 * each shipping its own autoload.php).
 */

spl_autoload_register(function (string $class): void {
    static $roots = null;
    $roots ??= ['App\\' => __DIR__.'/../app/', 'Tests\\' => __DIR__.'/../tests/'];
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

require_once 'Illuminate/autoload.php';
if (! class_exists(\PHPUnit\Framework\TestCase::class, false)) {
    require_once 'PHPUnit/Autoload.php';
}
