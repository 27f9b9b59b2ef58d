import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { Gauge, type Registry } from 'prom-client';

/**
 * Triton's host metrics: CPU utilization and memory from /proc (absent where /proc is
 * not there), and GPU utilization and memory from nvidia-smi where it answers (absent,
 * not zero, where it does not). `registered` hears each name as it is registered.
 */
export function registerSystemMetrics(registry: Registry, registered: (name: string) => void): void {
  if (readProc('/proc/stat') !== undefined) {
    const cpu = new CpuUtilization();
    new Gauge({
      name: 'nv_cpu_utilization',
      help: 'CPU utilization rate [0.0 - 1.0], since the previous scrape',
      registers: [registry],
      collect() {
        const utilization = cpu.sinceLast();
        if (utilization !== undefined) this.set(utilization);
      },
    });
  }
  if (readProc('/proc/meminfo') !== undefined) {
    const memory = (name: string, help: string, read: (info: Record<string, number>) => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          const info = meminfo();
          if (info) this.set(read(info));
        },
      });
    memory('nv_cpu_memory_total_bytes', 'CPU total memory (RAM), in bytes', (info) => info.MemTotal!);
    memory('nv_cpu_memory_used_bytes', 'CPU used memory (RAM), in bytes', (info) => info.MemTotal! - (info.MemAvailable ?? info.MemFree!));
  }
  // Found later (nvidia-smi answers asynchronously); a failure only means no GPU metrics.
  registerGpuMetrics(registry, registered).catch(() => {});
}

/** Busy over total jiffies between calls (since boot the first time). */
class CpuUtilization {
  private last = { busy: 0, total: 0 };

  sinceLast(): number | undefined {
    const line = readProc('/proc/stat')?.split('\n')[0];
    if (!line?.startsWith('cpu ')) return undefined;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    const idleAll = idle! + (iowait ?? 0);
    const total = user! + nice! + system! + idleAll + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
    const now = { busy: total - idleAll, total };
    const before = this.last;
    this.last = now;
    return now.total > before.total ? (now.busy - before.busy) / (now.total - before.total) : 0;
  }
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** /proc/meminfo in bytes by field. */
function meminfo(): Record<string, number> | undefined {
  const text = readProc('/proc/meminfo');
  if (!text) return undefined;
  const info: Record<string, number> = {};
  for (const match of text.matchAll(/^(\w+):\s+(\d+) kB$/gm)) info[match[1]!] = Number(match[2]) * 1024;
  return info;
}

const GPU_QUERY = ['--query-gpu=uuid,utilization.gpu,memory.total,memory.used,power.draw', '--format=csv,noheader,nounits'];

/** Registers the GPU gauges only if nvidia-smi answers now; one nvidia-smi run serves a whole scrape. */
async function registerGpuMetrics(registry: Registry, registered: (name: string) => void): Promise<void> {
  const run = async () => {
    const { stdout } = await promisify(execFile)('nvidia-smi', GPU_QUERY, { timeout: 2000 });
    return stdout
      .trim()
      .split('\n')
      .map((line) => line.split(',').map((field) => field.trim()))
      .map(([uuid, utilization, total, used, power]) => ({ uuid: uuid!, utilization: Number(utilization) / 100, total: Number(total) * 2 ** 20, used: Number(used) * 2 ** 20, power: Number(power) }));
  };
  let recent: { at: number; gpus: ReturnType<typeof run> } | undefined;
  const query = () => {
    if (!recent || performance.now() - recent.at > 1000) recent = { at: performance.now(), gpus: run().catch(() => []) };
    return recent.gpus;
  };
  if ((await query()).length === 0) return;
  const gauge = (name: string, help: string, read: (gpu: Awaited<ReturnType<typeof run>>[number]) => number) => {
    new Gauge({
      name,
      help,
      labelNames: ['gpu_uuid'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const gpu of await query()) if (Number.isFinite(read(gpu))) this.set({ gpu_uuid: gpu.uuid }, read(gpu));
      },
    });
    registered(name);
  };
  gauge('nv_gpu_utilization', 'GPU utilization rate [0.0 - 1.0)', (gpu) => gpu.utilization);
  gauge('nv_gpu_memory_total_bytes', 'GPU total memory, in bytes', (gpu) => gpu.total);
  gauge('nv_gpu_memory_used_bytes', 'GPU used memory, in bytes', (gpu) => gpu.used);
  gauge('nv_gpu_power_usage', 'GPU power usage in watts', (gpu) => gpu.power);
}
