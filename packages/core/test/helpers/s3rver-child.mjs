// s3rver on loopback in its own process: stores under argv[2], sends its port to the parent.
import S3rver from 's3rver';

const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: process.argv[2] });
const { port } = await server.run();
process.send(port);
process.on('disconnect', () => process.exit(0));
