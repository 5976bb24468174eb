// Spins the CPU for 40 ms of wall time, then answers.
export default function Burn(state) {
  const end = Date.now() + 40;
  let spins = 0;
  while (Date.now() < end) spins++;
  state.message.body = { burnt: 40, spins };
}
