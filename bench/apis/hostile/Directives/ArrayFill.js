// Measured here to abort the whole process through isolated-vm (exit 134): the cell contains it.
export default function () {
  new Array(5e7).fill(1);
}
