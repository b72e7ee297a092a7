<?php

/*
 * The evaluator's own class loading, run by PHPUnit before any test: the system's
 * Laravel (PHPUnit has loaded itself already), then the workspace's App\ and
 * Database\ classes by PSR-4 from their folders. Nothing under the workspace's
 * bootstrap/ runs (EvalCase builds the application itself), so a submission's
 * code loads only when the application first uses one of its classes.
 */

require_once '/usr/share/php/Illuminate/autoload.php';

spl_autoload_register(static function (string $class): void {
    $roots = [
        'App\\' => dirname(__DIR__).'/app/',
        'Database\\' => dirname(__DIR__).'/database/',
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
