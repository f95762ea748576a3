// Imported first by both entry points, so it runs before anything else loads. Plain old syntax, so
// that even a Node too old for the rest can parse it and say why it stops. Keep in step with
// "engines" in package.json, the Dockerfile's base image and the README.
var SUPPORTED = 'Node 20.19 or a later 20.x, or Node 22.12 or later';
var parts = process.versions.node.split('.');
var major = Number(parts[0]);
var minor = Number(parts[1]);
var supported = (major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22;
if (!supported) {
  process.stderr.write('herald: Node ' + process.versions.node + ' is not supported: Herald needs ' + SUPPORTED + ' (see https://nodejs.org)\n');
  process.exit(1);
}
