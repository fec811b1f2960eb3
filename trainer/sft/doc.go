// Package sft turns recorded episodes into supervised fine-tuning windows: it rebuilds
// conversation threads, renders them with the chat template, cuts masked windows, stores them
// as rows (JSONL and a compact binary form) and samples them for training.
package sft
