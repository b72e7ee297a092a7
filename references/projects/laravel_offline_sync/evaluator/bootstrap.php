<?php

// The workspace's own class loading, plus these evaluator classes whatever it maps.
require_once __DIR__.'/../../bootstrap/autoload.php';

spl_autoload_register(function (string $class): void {
    $prefix = 'Tests\\Eval\\';
    if (strncmp($class, $prefix, strlen($prefix)) === 0) {
        $file = __DIR__.'/'.str_replace('\\', '/', substr($class, strlen($prefix))).'.php';
        if (is_file($file)) {
            require_once $file;
        }
    }
}, true, true);
