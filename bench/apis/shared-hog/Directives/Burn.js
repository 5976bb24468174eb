// Spins the CPU for 30 ms of wall time, then answers.
export default function Burn(state) {
  const end = Date.now() + 30;
  let spins = 0;
  while (Date.now() < end) spins++;
  state.message.body = { burnt: 30, spins };
}
