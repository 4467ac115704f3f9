package dev.sluice.runner;

/** One declared input field: name, type (never NULL) and nullability. */
public record Field(String name, SqlType type, boolean nullable) {}
