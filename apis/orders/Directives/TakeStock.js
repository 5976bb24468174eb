// Takes `quantity` of `product` from the stock, inside the request's transaction; 409 when short.
export default function (state, config) {
  const taken = state.db.run('UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ?', [config.quantity, config.product, config.quantity]);
  if (taken.changes === 0) state.fail(409, `not enough stock of product ${config.product} for ${config.quantity}`);
}
