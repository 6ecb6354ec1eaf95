import express, { Request, Response, NextFunction } from "express";
import { z } from "zod";
import { db } from "./db";
import { logger } from "./logger";

const router = express.Router();

const CreateUser = z.object({
  email: z.string().email(),
  name: z.string().min(1).max(100),
  role: z.enum(["admin", "member", "viewer"]).default("member"),
});

type CreateUserInput = z.infer<typeof CreateUser>;

function requireAuth(req: Request, res: Response, next: NextFunction) {
  const token = req.header("authorization")?.replace("Bearer ", "");
  if (!token) {
    res.status(401).json({ error: "missing token" });
    return;
  }
  next();
}

router.get("/users", requireAuth, async (req: Request, res: Response) => {
  const page = Number(req.query.page ?? 1);
  const users = await db.user.findMany({
    skip: (page - 1) * 20,
    take: 20,
    orderBy: { createdAt: "desc" },
  });
  res.json({ users, page });
});

router.post("/users", requireAuth, async (req: Request, res: Response) => {
  const parsed = CreateUser.safeParse(req.body);
  if (!parsed.success) {
    res.status(400).json({ error: parsed.error.flatten() });
    return;
  }
  const input: CreateUserInput = parsed.data;
  const existing = await db.user.findUnique({ where: { email: input.email } });
  if (existing) {
    res.status(409).json({ error: "email already registered" });
    return;
  }
  const user = await db.user.create({ data: input });
  logger.info(`created user ${user.id}`);
  res.status(201).json(user);
});

router.delete("/users/:id", requireAuth, async (req: Request, res: Response) => {
  await db.user.delete({ where: { id: req.params.id } });
  res.status(204).end();
});

export default router;
