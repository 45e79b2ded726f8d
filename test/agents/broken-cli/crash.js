// Stands in for dist/cli.js in a broken-on-purpose run: the hook program crashes (exit status 1).
'use strict';
throw new Error('bulwark test: the hook program crashed on purpose');
