# frozen_string_literal: true

require "csv"
require "date"

# Builds the monthly sales report from exported orders.
class SalesReport
  HEADERS = ["Month", "Orders", "Revenue", "Average"].freeze

  def initialize(rows)
    @rows = rows
  end

  def self.from_csv(path)
    rows = CSV.read(path, headers: true).map(&:to_h)
    new(rows)
  end

  def by_month
    @rows.group_by { |r| Date.parse(r["date"]).strftime("%Y-%m") }
  end

  def lines
    by_month.sort.map do |month, orders|
      revenue = orders.sum { |o| o["amount"].to_f }
      average = orders.empty? ? 0 : revenue / orders.size
      [month, orders.size, format("%.2f", revenue), format("%.2f", average)]
    end
  end

  def to_csv
    CSV.generate do |csv|
      csv << HEADERS
      lines.each { |line| csv << line }
    end
  end

  # The month with the highest revenue, or nil when there are no orders.
  def best_month
    return nil if @rows.empty?

    lines.max_by { |l| l[2].to_f }&.first
  end
end
