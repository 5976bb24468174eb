// Stores 40 strings of 1 MiB in request memory: the host would hold 40 MiB for an API limited to 32.
export default function Hoard(state) {
  for (let i = 0; i < 40; i++) state.memory.set(`kept${i}`, String(i % 10).repeat(1024 * 1024));
}
