// Stands in for dist/cli.js in a broken-on-purpose run: the hook program never answers.
'use strict';
setInterval(() => {}, 60_000);
