/**
 * `sluice diff --base REF [--head REF]`: the Git base/head comparison of the project, offline
 * (Git objects and the working tree only). Also the review renderings shared with `plan`:
 * text, `-o json` (the review object) and `--format markdown` (a pull-request comment).
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import { Option } from "npm:commander@15.1.0";
import { renderReviewMarkdown, renderReviewText, SluiceError } from "../../mod.ts";
import type { Review, RuntimeDeps } from "../../mod.ts";
import { outputFormat, printResult } from "../output.ts";
import { openCommandProject } from "./_options.ts";

/** The `--format` option of review-producing commands. */
export function formatOption(): Option {
  return new Option("--format <format>", "how the review is written under -o text")
    .choices(["text", "markdown"]).default("text");
}

/** Render a review as the chosen format; `-o json` and `--format markdown` exclude each other. */
export function reviewRenderer(
  cmd: Command,
  format: string | undefined,
): (review: Review) => string {
  if (format === "markdown" && outputFormat(cmd) === "json") {
    throw new SluiceError(
      "USAGE_FORMAT",
      "--format markdown renders text output; -o json prints the review object itself",
    );
  }
  return format === "markdown" ? renderReviewMarkdown : renderReviewText;
}

/** Add `diff`. */
export function register(program: Command, deps: RuntimeDeps = {}): void {
  program
    .command("diff")
    .description(
      "compare the project at a Git revision with another or the working tree (offline; reads Git objects only)",
    )
    .requiredOption("--base <ref>", "the base revision (commit, branch, tag, HEAD~1, ...)")
    .option("--head <ref>", "the head revision (default: the working tree)")
    .option("--project <dir>", "project directory inside a Git working tree", ".")
    .option("--env <name>", "environment (required when the manifest declares environments)")
    .addOption(formatOption())
    .action(
      async (
        opts: { base: string; head?: string; project: string; env?: string; format?: string },
        cmd: Command,
      ) => {
        const render = reviewRenderer(cmd, opts.format);
        await using project = await openCommandProject(deps, opts);
        const review = await project.diff({ base: opts.base, head: opts.head ?? null });
        printResult(outputFormat(cmd), "diff", review, () => render(review));
      },
    );
}
