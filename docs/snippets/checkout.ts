import { NeedsInput, Task, type TaskContext } from 'mcp-task-server';

interface Order {
  id: string;
  amountCents: number;
}

interface Approval {
  /** Charge the card? */
  confirm: boolean;
}

declare const pricing: { quote(order: Order): Promise<{ totalCents: number }> };
declare const payments: {
  charge(quote: { totalCents: number }, options: { idempotencyKey: string }): Promise<{ id: string }>;
};

export class Checkout {
  // #region checkout
  @Task()
  @NeedsInput<Approval>('approval', { message: 'Charge the card?' })
  async checkout(order: Order, ctx: TaskContext<{ approval: Approval }>) {
    // Runs once per task, even though the method runs again after the question and after a crash.
    const quote = await ctx.step('quote', () => pricing.quote(order));
    const answer = await ctx.input('approval');
    if (answer.action !== 'accept') return { charged: false };
    // A payment API that takes an idempotency key is safe even if this run dies half-way.
    const charge = await ctx.step('charge', () => payments.charge(quote, { idempotencyKey: order.id }));
    return { charged: true, chargeId: charge.id };
  }
  // #endregion checkout
}
